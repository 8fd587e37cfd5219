# Shared by make_captures.sh and make_app_captures.sh (sourced, not run).

# listening LOG: wait (up to 10 s) until the tcpdump writing its messages to LOG has started
# capturing ("listening on ..."); fail with its messages if it does not.
listening() {
    for _ in $(seq 100); do
        grep -q "listening on" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "tcpdump did not start: $(cat "$1")" >&2
    return 1
}
