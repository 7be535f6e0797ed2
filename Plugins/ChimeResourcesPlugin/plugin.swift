import Foundation
import PackagePlugin

/// Compiles a target's `ui/chime.gresource.xml` (its GtkBuilder `.ui` files, and the icons of
/// Resources/icons) into a GResource bundle, and generates `ChimeResources.bundle`, that bundle
/// as a Swift string, for the target to register at start (with the chime-resources tool). The
/// bundle is then part of the executable in every build: debug, scripts/release-build's static
/// one and the package's. The command reruns when any of its files changes.
@main
struct ChimeResourcesPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let ui = target.directoryURL.appending(component: "ui")
        let icons = context.package.directoryURL.appending(components: "Resources", "icons")
        let xml = ui.appending(component: "chime.gresource.xml")
        let files = [ui, icons].flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false))) ?? [])
                .sorted()
                .map { directory.appending(component: $0) }
        }
        let output = context.pluginWorkDirectoryURL.appending(component: "ChimeResources.swift")
        return [
            .buildCommand(
                displayName: "Compiling the app window's GResource bundle",
                executable: try context.tool(named: "chime-resources").url,
                arguments: [xml, ui, icons, output].map { $0.path(percentEncoded: false) },
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
