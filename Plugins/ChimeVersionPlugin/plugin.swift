import PackagePlugin

/// Generates `ChimeVersion.string` for a target from the first entry of
/// packaging/debian/changelog (with the chime-version tool), so that `chime --version` and the
/// Debian package take their version from one file. The command reruns only when the changelog
/// changes.
@main
struct ChimeVersionPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let changelog = context.package.directoryURL.appending(components: "packaging", "debian", "changelog")
        let output = context.pluginWorkDirectoryURL.appending(component: "ChimeVersion.swift")
        return [
            .buildCommand(
                displayName: "Reading Chime's version from packaging/debian/changelog",
                executable: try context.tool(named: "chime-version").url,
                arguments: [changelog.path(percentEncoded: false), output.path(percentEncoded: false)],
                inputFiles: [changelog],
                outputFiles: [output]
            )
        ]
    }
}
