# Sourced by scripts/bench-peers: `numabench c2c` beside core-to-core-latency
# (https://github.com/nviennot/core-to-core-latency; `cargo install
# core-to-core-latency`), one CSV line per CPU pair and test:
#
#   core-to-core-latency,cas_0-1,26.1,26.3,0.992
#
# Tests (both sides with the peer's defaults, 1000 round trips per sample and
# 300 samples after one warm-up sample):
#   cas    numabench c2c --variant cas    vs core-to-core-latency -b 1 (one line,
#          compare-and-swap ping-pong)
#   store  numabench c2c --variant store  vs core-to-core-latency -b 2 (two lines,
#          load/store ping-pong)
# One-way latency = round trip / 2 on both sides. core-to-core-latency prints the
# mean of a pair's samples only (--csv); numabench's figure is the median of its
# samples, and its mean is shown beside it in every round. Rounds alternate
# numabench, peer, numabench, peer, ... and each is printed; the CSV line gives
# the median over the rounds of numabench's per-pair median and of the peer's
# per-pair mean, ratio = numabench / peer, and a second line (<test>_<pair>_mean)
# numabench's per-pair mean in place of its median: mean against mean. A third
# line (<test>_<pair>_paired) gives the median of each round's own ratio, the
# figure to read when the rounds fall into latency regimes (a host moving the
# vCPUs between cores of different distance, see run_c2c_pairs), and a fourth
# (<test>_<pair>_mean_paired) the same with numabench's mean: like with like
# in both the statistic and the placement.
#
# Uses from bench-peers: $nb, $tmp, note, die, fail, median, paired_line,
# is_uint; and its options $c2c_bin (path of core-to-core-latency),
# $c2c_rounds, $c2c_cpus.

# The CPUs this process may use, comma-separated (the peer's -c wants a list).
c2c_allowed_cpus() {
    awk -F: '/^Cpus_allowed_list/ { gsub(/[ \t]/, "", $2); print $2 }' /proc/self/status |
        tr ',' '\n' | awk -F- '{ hi = (NF > 1) ? $2 : $1; for (c = $1; c <= hi; c++) print c }' | paste -sd, -
}

c2c_find_peer() {
    if [ -n "$c2c_bin" ]; then
        [ -x "$c2c_bin" ] || die "--c2c-bin '$c2c_bin' is not an executable file"
        echo "$c2c_bin"; return 0
    fi
    command -v core-to-core-latency 2>/dev/null && return 0
    [ -x "$HOME/.cargo/bin/core-to-core-latency" ] && { echo "$HOME/.cargo/bin/core-to-core-latency"; return 0; }
    echo "$PROG: error: core-to-core-latency not found; install it with 'cargo install core-to-core-latency' or give its path with --c2c-bin" >&2
    exit 2
}

# numabench's CSV -> "a-b median mean" lines, the columns found by name.
c2c_parse_nb() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $1 !~ /^#/ && $col["latency_ns"] != "" {
            printf "%s-%s %s %s\n", $col["cpu"], $col["peer_cpu"], $col["latency_ns"], $col["latency_mean_ns"]
        }' "$1"
}

# The peer's CSV (row i, column j < i: the mean of cores i and j, in -c order)
# -> "a-b mean" lines with a < b.
c2c_parse_peer() {
    awk -F, -v cpus="$2" 'BEGIN { n = split(cpus, id, ",") }
        NF > 0 { i++; for (j = 1; j < i; j++) if ($j != "") {
            a = id[i]; b = id[j]; if (a + 0 > b + 0) { t = a; a = b; b = t }
            printf "%s-%s %s\n", a, b, $j } }' "$1"
}

# Column $3 of the lines for pair $2 in $1 (the files c2c_parse_* write).
c2c_pair_col() {
    awk -v p="$2" -v c="$3" '$1 == p { print $c }' "$1"
}

run_c2c_pairs() {
    local peer cpus test bflag r pair nbm nbmean pm
    peer=$(c2c_find_peer)
    cpus=${c2c_cpus:-$(c2c_allowed_cpus)}
    [[ $cpus == *,* ]] || die "c2c needs at least two CPUs, got '$cpus'"
    "$nb" c2c --help >/dev/null 2>&1 || die "$nb has no working 'c2c' command"
    note "c2c: peer $peer, numabench $nb, CPUs $cpus, $c2c_rounds alternating rounds per test"
    for test in cas store; do
        case $test in cas) bflag=1 ;; store) bflag=2 ;; esac
        local -a nb_cmd=("$nb" c2c --variant "$test" --cpus "$cpus" -i 1000 --samples 300 --csv)
        local -a pr_cmd=("$peer" 1000 300 -b "$bflag" -c "$cpus" --csv)
        note "c2c $test:   ${nb_cmd[*]}"
        note "c2c $test:   ${pr_cmd[*]}"
        : >"$tmp/c2c-nb.all"; : >"$tmp/c2c-pr.all"; : >"$tmp/c2c-ratio.all"
        for ((r = 1; r <= c2c_rounds; r++)); do
            "${nb_cmd[@]}" >"$tmp/c2c-nb.csv" 2>"$tmp/c2c-nb.err" || { note "c2c: numabench failed:"; show_tail "$tmp/c2c-nb.err"; exit 1; }
            "${pr_cmd[@]}" >"$tmp/c2c-pr.csv" 2>"$tmp/c2c-pr.err" || { note "c2c: core-to-core-latency failed:"; show_tail "$tmp/c2c-pr.err"; exit 1; }
            c2c_parse_nb "$tmp/c2c-nb.csv" >"$tmp/c2c-nb.round"
            c2c_parse_peer "$tmp/c2c-pr.csv" "$cpus" >"$tmp/c2c-pr.round"
            [ -s "$tmp/c2c-nb.round" ] || { note "c2c: no pairs in numabench's CSV"; show_tail "$tmp/c2c-nb.csv"; exit 1; }
            [ -s "$tmp/c2c-pr.round" ] || { note "c2c: no pairs in the peer's CSV"; show_tail "$tmp/c2c-pr.csv"; exit 1; }
            while read -r pair nbm nbmean; do
                pm=$(c2c_pair_col "$tmp/c2c-pr.round" "$pair" 2)
                note "c2c $test $pair: round $r/$c2c_rounds: numabench median $nbm ns (mean $nbmean), core-to-core-latency mean ${pm:-?} ns"
                [ -n "$pm" ] && awk -v p="$pair" -v a="$nbm" -v m="$nbmean" -v b="$pm" \
                    'BEGIN { if (b > 0) printf "%s %.4f %.4f\n", p, a / b, m / b }' >>"$tmp/c2c-ratio.all"
            done <"$tmp/c2c-nb.round"
            cat "$tmp/c2c-nb.round" >>"$tmp/c2c-nb.all"
            cat "$tmp/c2c-pr.round" >>"$tmp/c2c-pr.all"
        done
        for pair in $(awk '{ print $1 }' "$tmp/c2c-nb.all" | sort -u -t- -k1,1n -k2,2n); do
            # shellcheck disable=SC2046
            nbm=$(median $(c2c_pair_col "$tmp/c2c-nb.all" "$pair" 2))
            pm=$(c2c_pair_col "$tmp/c2c-pr.all" "$pair" 2)
            [ -n "$pm" ] || { note "c2c $test $pair: the peer has no figure for this pair"; continue; }
            # shellcheck disable=SC2086
            pm=$(median $pm)
            ratio_line core-to-core-latency "${test}_$pair" "$nbm" "$pm" 2
            # The like-for-like line: numabench's mean of its samples against
            # the peer's (the peer prints no median).
            # shellcheck disable=SC2046
            nbmean=$(median $(c2c_pair_col "$tmp/c2c-nb.all" "$pair" 3))
            ratio_line core-to-core-latency "${test}_${pair}_mean" "$nbmean" "$pm" 2
            # The paired line: the median of each round's own ratio (numabench's
            # median / the peer's mean, taken seconds apart). A host that moves
            # the two vCPUs between cores of different distance mid-run makes the
            # rounds fall into a few latency regimes; the ratio of medians then
            # compares whichever regime each side's middle round fell in, while
            # a round's own ratio compares like with like in all but the rounds
            # where the move fell between the two samples.
            # shellcheck disable=SC2046
            paired_line core-to-core-latency "${test}_$pair" "$nbm" "$pm" $(c2c_pair_col "$tmp/c2c-ratio.all" "$pair" 2)
            # Both at once, the figure to read on such a host: each round's
            # mean against the peer's mean, the median over the rounds.
            # shellcheck disable=SC2046
            paired_line core-to-core-latency "${test}_${pair}_mean" "$nbmean" "$pm" $(c2c_pair_col "$tmp/c2c-ratio.all" "$pair" 3)
        done
    done
}
