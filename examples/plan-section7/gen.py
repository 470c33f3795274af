#!/usr/bin/env python3
"""Generates jobs.csv for the MISSION section 7 scenario (deterministic).

The mission's statement is stylised, and so is this workload: a steady base
of exactly 10 machines of work around the clock (10 lanes of 12-hour 8-GPU
jobs, back to back), and every day at 09:00 ten more 8-GPU jobs of 7.2 hours
(30% of the day). Fourteen days.
Demand is 10 machines at night and 20 in the window, so 20 reserved machines
never queue, and 10 reserved + 10 elastic use the elastic ones 30% of the time.
Run: python3 gen.py > jobs.csv
"""
DAYS = 14
jobs = []
for lane in range(10):  # the base: each lane starts staggered, then runs back to back
    t = lane * 4320  # 1.2 hours apart
    while t < DAYS * 86400:
        jobs.append((t, 12 * 3600, "normal"))
        t += 12 * 3600
for day in range(DAYS):  # the peak: 7.2 hours from 09:00
    for lane in range(10):
        jobs.append((day * 86400 + 9 * 3600, int(7.2 * 3600), "low"))
jobs.sort()
print("job_id,submit_time,runtime,gpus,priority")
for i, (submit, runtime, prio) in enumerate(jobs):
    print(f"j{i:05d},{submit},{runtime},8,{prio}")
