# shellcheck shell=bash
# Sourced by scripts/bench-peers: `numabench loaded` next to multichase's
# multiload on the same chase and the same load, alternating rounds
# (numabench, multiload, numabench, ...), every round shown on stderr, the
# median of each side in the CSV line.
#
# multiload is not packaged; build it from its source (github.com/google/multichase):
#   git clone https://github.com/google/multichase && cd multichase && make multiload
# and pass --multiload PATH/multiload.
#
# What is compared (SIZE = --ml-size, default 1 GiB; both sides THP):
#   idle        numabench loaded's idle point (injectors parked)
#               vs multiload -c simple -t 1 (latency only)
#   read-load   the delay-0 point with --traffic read and one injector
#               vs multiload -c chaseload -l stream-sum -t 2 (chase + 1 load)
#   copy-load   the delay-0 point with --traffic copy-nt (non-temporal stores)
#               vs multiload -c chaseload -l memcpy-libc -t 2 (glibc's
#               memcpy, which copies this large with non-temporal stores)
# Both chase a full-random cycle over SIZE in 64-byte steps (multiload:
# -s 64 -T SIZE, one TLB-locality window over the whole buffer), each
# injector over its own SIZE buffer. multiload pins thread i to the i-th
# allowed CPU (chase first); numabench puts the chase on the node's first
# core and the injector on the next. The latency figure is numabench's
# median of samples and multiload's geometric mean of its 2 s samples
# (-a); bandwidth is what the injectors moved, MB/s = 10^6 bytes (multiload
# prints MiB/s, converted here); both count a copy's reads and writes.
# multiload's injection delay exists only for its non-temporal triad load,
# so the matching load points are idle and full load.
#
# Matching load points: one injector of each tool does not move the same
# bandwidth at full load (numabench's widest read kernel against multiload's
# compiled loop), so for the loaded tests numabench measures a short curve
# (delays 0, 25, 50, 100, 200 ns) and its latency is read off that curve at
# the bandwidth multiload's injector moved in the same round (linear
# between the two points around it; the delay-0 point where multiload moved
# more). The full-load figures of both are shown too.
#
# CSV lines: multiload,<test>-latency_ns,... (at matching bandwidth),
# multiload,<test>-full-latency_ns,... (both at delay 0) and
# multiload,<test>-mb_s,... (bandwidth at delay 0).

# numabench loaded's CSV: the figure of column $2 (bandwidth_mb_s or
# latency_ns) on the row whose delay_ns is $3 (idle or 0).
ml_nb_figure() {
    awk -F, -v col="$2" -v d="$3" '
        NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
        /^#/ { next }
        $h["delay_ns"] == d { print $h[col]; exit }' "$1"
}

# multiload's result line: the column named $2 (ChaseNS, LdAvgMibs).
ml_figure() {
    awk -F, -v col="$2" '
        /^Samples/ { for (i = 1; i <= NF; i++) { c = $i; gsub(/[ \t]/, "", c); h[c] = i }; next }
        ("ChaseNS" in h) && NF > 5 { v = $h[col]; gsub(/[ \t]/, "", v); print v; exit }' "$1"
}

# numabench's latency at bandwidth $2 MB/s, linear on the loaded points of
# the CSV $1 sorted by bandwidth; the nearest end outside the curve.
ml_nb_at() {
    awk -F, -v t="$2" '
        NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
        /^#/ || $h["delay_ns"] == "idle" { next }
        { n++; b[n] = $h["bandwidth_mb_s"] + 0; l[n] = $h["latency_ns"] + 0 }
        END {
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                if (b[j] < b[i]) { x = b[i]; b[i] = b[j]; b[j] = x; x = l[i]; l[i] = l[j]; l[j] = x }
            if (n == 0) exit
            if (t <= b[1]) { print l[1]; exit }
            for (i = 2; i <= n; i++) if (t <= b[i]) {
                printf "%.2f\n", l[i-1] + (t - b[i-1]) / (b[i] - b[i-1]) * (l[i] - l[i-1]); exit }
            print l[n]
        }' "$1"
}

run_multiload_pairs() {
    [ -n "$ml_bin" ] || die "--peer multiload needs --multiload PATH (build: make multiload in a multichase checkout)"
    [ -x "$ml_bin" ] || die "multiload binary '$ml_bin' not found or not executable"
    is_uint "$ml_rounds" && [ "$ml_rounds" -gt 0 ] || die "--ml-rounds wants a positive number, got '$ml_rounds'"
    is_uint "$ml_samples" && [ "$ml_samples" -gt 0 ] || die "--ml-samples wants a positive number, got '$ml_samples'"
    local size_b=$(( ml_size_mib * 1048576 ))
    note "multiload: $ml_bin; chase and each load ${ml_size_mib} MiB, THP, full-random 64-byte steps; multiload -n $ml_samples samples of 2 s, -a (geometric mean)"
    note "multiload: $ml_rounds alternating rounds per test (numabench, multiload, ...); the median of each side is reported"
    local test nbargs mlargs r nbl nbb mll mlb
    for test in idle read-load copy-load; do
        case $test in
            idle)      nbargs="--delays 0 --traffic read" ; mlargs="-c simple -t 1" ;;
            read-load) nbargs="--delays 0,25,50,100,200 --traffic read" ; mlargs="-c chaseload -l stream-sum -t 2" ;;
            copy-load) nbargs="--delays 0,25,50,100,200 --traffic copy-nt" ; mlargs="-c chaseload -l memcpy-libc -t 2" ;;
        esac
        local nb_lat=() nb_bw=() ml_lat=() ml_bw=() nb_at=()
        for r in $(seq 1 "$ml_rounds"); do
            # shellcheck disable=SC2086
            "$nb" loaded $nbargs --injectors 1 --size "${ml_size_mib}M" --injector-size "${ml_size_mib}M" \
                --pairs near-far --csv >"$tmp/nbl.csv" 2>"$tmp/nbl.err" ||
                { note "$test: numabench loaded failed:"; show_tail "$tmp/nbl.err"; exit 1; }
            # shellcheck disable=SC2086
            "$ml_bin" $mlargs -m "$size_b" -T "$size_b" -s 64 -H -a -n "$ml_samples" >"$tmp/ml.out" 2>&1 ||
                { note "$test: multiload failed:"; show_tail "$tmp/ml.out"; exit 1; }
            mll=$(ml_figure "$tmp/ml.out" ChaseNS)
            mlb=$(ml_figure "$tmp/ml.out" LdAvgMibs)
            mlb=$(awk -v v="${mlb:-0}" 'BEGIN { printf "%.1f", v * 1.048576 }')
            [ -n "$mll" ] || { note "$test: no result line from multiload:"; show_tail "$tmp/ml.out"; exit 1; }
            if [ "$test" = idle ]; then
                nbl=$(ml_nb_figure "$tmp/nbl.csv" latency_ns idle) nbb=0 nba=$nbl
            else
                nbl=$(ml_nb_figure "$tmp/nbl.csv" latency_ns 0)
                nbb=$(ml_nb_figure "$tmp/nbl.csv" bandwidth_mb_s 0)
                nba=$(ml_nb_at "$tmp/nbl.csv" "$mlb")
            fi
            [ -n "$nbl" ] && [ -n "$nba" ] || { note "$test: no figure from numabench:"; show_tail "$tmp/nbl.csv"; exit 1; }
            note "$test: round $r/$ml_rounds: numabench $nbl ns at $nbb MB/s ($nba ns at multiload's $mlb MB/s), multiload $mll ns at $mlb MB/s"
            if [ "$test" != idle ]; then
                note "$test:   numabench curve (delay_ns, MB/s, ns): $(awk -F, 'NR > 1 && !/^#/ { printf "%s %s %s; ", $3, $6, $7 }' "$tmp/nbl.csv")"
            fi
            nb_lat+=("$nbl") nb_bw+=("$nbb") ml_lat+=("$mll") ml_bw+=("$mlb") nb_at+=("$nba")
        done
        local a b
        a=$(median "${nb_at[@]}") b=$(median "${ml_lat[@]}")
        note "$test: median latency at multiload's bandwidth: numabench $a ns (${nb_at[*]}), multiload $b ns (${ml_lat[*]})"
        ratio_line multiload "$test-latency_ns" "$a" "$b" 2
        if [ "$test" != idle ]; then
            a=$(median "${nb_lat[@]}")
            note "$test: median latency at each tool's full load: numabench $a ns (${nb_lat[*]}), multiload $b ns"
            ratio_line multiload "$test-full-latency_ns" "$a" "$b" 2
            a=$(median "${nb_bw[@]}") b=$(median "${ml_bw[@]}")
            note "$test: median injected numabench $a MB/s (${nb_bw[*]}), multiload $b MB/s (${ml_bw[*]})"
            ratio_line multiload "$test-mb_s" "$a" "$b" 1
        fi
    done
}
