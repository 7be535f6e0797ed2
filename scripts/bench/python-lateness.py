#!/usr/bin/env python3
"""What chime-bench compares Chime's firing lateness with: Python's sched module and, when it is
installed (pip install "apscheduler<4"), APScheduler's BackgroundScheduler with one date job per
deadline. Prints one JSON object: {"sched": [ms, ...], "apscheduler": [ms, ...] or null}.

Usage: python-lateness.py COUNT SPREAD_SECONDS
Lateness is the call of the job minus its deadline, in milliseconds, as chime-bench measures
the notifier call minus the due time.
"""
import json
import sched
import sys
import threading
import time


def deadlines(count, spread, lead=1.0):
    first = time.time() + lead
    return [first + spread * i / count for i in range(count)]


def with_sched(count, spread):
    values = []
    scheduler = sched.scheduler(time.time, time.sleep)
    for deadline in deadlines(count, spread):
        scheduler.enterabs(deadline, 1, lambda d=deadline: values.append((time.time() - d) * 1000))
    scheduler.run()
    return values


def with_apscheduler(count, spread):
    try:
        from apscheduler.schedulers.background import BackgroundScheduler
    except ImportError:
        return None
    from datetime import datetime, timezone

    values = []
    done = threading.Event()
    lock = threading.Lock()

    def job(deadline):
        late = (time.time() - deadline) * 1000
        with lock:
            values.append(late)
            if len(values) == count:
                done.set()

    scheduler = BackgroundScheduler(job_defaults={"misfire_grace_time": 60, "coalesce": False})
    scheduler.start()
    # A longer lead: adding thousands of jobs takes APScheduler a while.
    for deadline in deadlines(count, spread, lead=3.0):
        scheduler.add_job(job, "date", run_date=datetime.fromtimestamp(deadline, timezone.utc), args=[deadline])
    done.wait(spread + 60)
    scheduler.shutdown(wait=False)
    return values


if __name__ == "__main__":
    count, spread = int(sys.argv[1]), float(sys.argv[2])
    print(json.dumps({"sched": with_sched(count, spread), "apscheduler": with_apscheduler(count, spread)}))
