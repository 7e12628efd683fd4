#!/usr/bin/env bash
# Runs a test command with a time limit that leaves a diagnosis behind.
#
#   Tests/scripts/watchdog.sh SECONDS command args...
#
# The command's output is line-buffered (stdbuf), so a log cut short still ends with the last test
# that started. Past SECONDS, gdb (when installed) prints every thread's stack of each XCTest
# bundle the command started, which shows where the hung test waits (Swift's own backtracer stops
# at libc's frames), then the whole command is killed. The exit status is the command's, or 124
# after a timeout (as timeout(1)).
set -u
limit=$1; shift

# The process ids below $1, deepest last.
descendants() {
    local p
    for p in $(pgrep -P "$1"); do echo "$p"; descendants "$p"; done
}

# (WATCHDOG_STDBUF=0 for a program built with AddressSanitizer, whose runtime must be the first
# library loaded: stdbuf preloads its own.)
if [ "${WATCHDOG_STDBUF:-1}" = 1 ]; then stdbuf -oL -eL "$@" & else "$@" & fi
child=$!
# A background command ignores SIGINT: pass an interrupt (or a TERM) on to the whole command.
trap 'kill -TERM $(descendants "$child") "$child" 2>/dev/null; exit 130' INT TERM
(
    for ((i = 0; i < limit; i++)); do
        sleep 1
        kill -0 "$child" 2>/dev/null || exit 0
    done
    echo "watchdog: '$*' still running after ${limit}s: stopping it" >&2
    for p in $(descendants "$child"); do
        case "$(cat "/proc/$p/comm" 2>/dev/null)" in
        *xctest*|*PackageTes*)
            echo "watchdog: the threads of test process $p" >&2
            command -v gdb >/dev/null && timeout 120 gdb -p "$p" -batch -ex 'thread apply all bt 30' 2>&1 \
                | grep -E '^(Thread|#)' >&2 ;;
        esac
    done
    kill -KILL $(descendants "$child") "$child" 2>/dev/null
    exit 1
) &
dog=$!
wait "$child"
status=$?
wait "$dog" || status=124
exit "$status"
