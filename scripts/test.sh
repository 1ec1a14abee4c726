#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run every test with meson and end with a summary line that names the
# skipped tests, so a log shows at once whether anything did not run.
set -u
builddir=${1:-build}
meson test -C "$builddir" --print-errorlogs --num-processes 2
rc=$?
log="$builddir/meson-logs/testlog.json"
if [ -f "$log" ]; then
	python3 - "$log" <<'PY'
import json, sys
ok = fail = skip = 0
skipped = []
for line in open(sys.argv[1]):
    t = json.loads(line)
    r = t.get("result")
    if r == "OK" or r == "EXPECTEDFAIL":
        ok += 1
    elif r == "SKIP":
        skip += 1
        skipped.append(t["name"])
    else:
        fail += 1
print(f"skipped tests: {', '.join(skipped) if skipped else 'none'}")
print(f"{ok} passed, {fail} failed, {skip} skipped")
PY
fi
exit $rc
