# shellcheck shell=bash
# Sourced by scripts/bench-peers for `--peer self`: every tool against
# itself. Side A and side B run the same command, alternating rounds as the
# peer pairs do (A, B, A, B, ...), every round shown on stderr, and the CSV
# line gives the ratio of the two medians. Where one tool cannot reproduce
# its own median within x%, a ratio between two tools within x% says
# nothing either: these lines are the yardstick for the peer ratios of the
# same run.
#
# Tests (each where its tool is found; the others are named and skipped):
#   numabench:latency-full-random   numabench latency -s 1g --pages thp --pattern full-random
#   numabench:latency-page-local    the same with --pattern page-local
#   numabench:c2c-cas               numabench c2c --variant cas on the first two allowed CPUs
#   likwid-bench:read_1t            likwid-bench -t load_mem (else load) -W N:1GB:1
#   likwid-bench:triad_<n>t         likwid-bench -t stream_mem_sse (else stream_mem_avx,
#                                   stream) -W N:1GB:<all CPUs>
#   multichase:full-random          multichase -m 1g -H -T 1g  (with --multichase)
#   multichase:page-local           multichase -m 1g -H        (with --multichase)
#   core-to-core-latency:cas        core-to-core-latency 1000 300 -b 1 on the first two CPUs
#   core-to-core-latency:store      the same with -b 2
# CSV: self,<tool>:<test>,<median A>,<median B>,<A / B>.
#
# Needs from bench-peers: nb, mc, tmp, rounds, median, ratio_line, note,
# show_tail, c2c_allowed_cpus, c2c_find_peer.

self_number() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

# One test: $1 name, $2 decimals, the rest a command that prints one figure.
self_pair() {
    local name=$1 dec=$2 r va vb
    shift 2
    local -a a=() b=()
    for ((r = 1; r <= rounds; r++)); do
        va=$("$@") && self_number "$va" || { note "$name: no figure in round $r ('$va'); test left out"; return 0; }
        vb=$("$@") && self_number "$vb" || { note "$name: no figure in round $r ('$vb'); test left out"; return 0; }
        note "$name: round $r/$rounds: A $va, B $vb"
        a+=("$va") b+=("$vb")
    done
    note "$name: median A $(median "${a[@]}") (${a[*]}), B $(median "${b[@]}") (${b[*]})"
    ratio_line self "$name" "$(median "${a[@]}")" "$(median "${b[@]}")" "$dec"
}

# numabench latency's ns per load for pattern $1.
self_nb_latency() {
    "$nb" latency -s 1g --pages thp --pattern "$1" --csv >"$tmp/self.csv" 2>"$tmp/self.err" ||
        { show_tail "$tmp/self.err"; return 1; }
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
        /^#/ { next } { print $h["latency_ns"]; exit }' "$tmp/self.csv"
}

# numabench c2c's median one-way ns between the CPUs $1 (A,B).
self_nb_c2c() {
    "$nb" c2c --variant cas --cpus "$1" -i 1000 --samples 300 --csv >"$tmp/self.csv" 2>"$tmp/self.err" ||
        { show_tail "$tmp/self.err"; return 1; }
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
        /^#/ { next } { print $h["latency_ns"]; exit }' "$tmp/self.csv"
}

# likwid-bench's MB/s for test $1 on $2 threads over 1 GB.
self_likwid() {
    likwid-bench -t "$1" -W "N:1GB:$2" >"$tmp/self.out" 2>&1 || { show_tail "$tmp/self.out"; return 1; }
    awk -F: '/^MByte\/s:/ { gsub(/[ \t]/, "", $2); print $2 }' "$tmp/self.out"
}

# The first of the likwid-bench tests named that this build has.
self_likwid_test() {
    local t
    for t in "$@"; do
        grep -q "^$t - " "$tmp/self-likwid-tests" && { echo "$t"; return 0; }
    done
    return 1
}

# multichase's printed figure (ns) with the arguments given.
self_multichase() {
    # shellcheck disable=SC2068
    "$mc" $@ >"$tmp/self.out" 2>&1 || { show_tail "$tmp/self.out"; return 1; }
    awk '/^ *[0-9]+(\.[0-9]+)? *$/ { v = $1 } END { print v }' "$tmp/self.out"
}

# core-to-core-latency's mean ns: test -b $1, binary $2, CPUs $3 (A,B).
self_c2c_peer() {
    "$2" 1000 300 -b "$1" -c "$3" --csv >"$tmp/self.out" 2>"$tmp/self.err" || { show_tail "$tmp/self.err"; return 1; }
    awk -F, 'NR == 2 { print $1 }' "$tmp/self.out"
}

run_self_pairs() {
    local pair cpus n t peer
    cpus=$(c2c_allowed_cpus)
    n=$(tr ',' '\n' <<<"$cpus" | grep -c .)
    pair=$(cut -d, -f1,2 <<<"$cpus")
    note "self: every tool against itself, $rounds alternating rounds per test (A, B, A, B, ...); ratio = median A / median B"
    self_pair numabench:latency-full-random 2 self_nb_latency full-random
    self_pair numabench:latency-page-local 2 self_nb_latency page-local
    if [ "$n" -ge 2 ]; then
        self_pair numabench:c2c-cas 2 self_nb_c2c "$pair"
    fi
    if command -v likwid-bench >/dev/null 2>&1 && likwid-bench -a >"$tmp/self-likwid-tests" 2>&1; then
        t=$(self_likwid_test load_mem load) && self_pair "likwid-bench:read_1t" 1 self_likwid "$t" 1
        t=$(self_likwid_test stream_mem_sse stream_mem_avx stream) && self_pair "likwid-bench:triad_${n}t" 1 self_likwid "$t" "$n"
    else
        note "self: likwid-bench not found; its tests left out (Debian package likwid)"
    fi
    if [ -n "${mc:-}" ] && [ -x "$mc" ]; then
        self_pair multichase:full-random 1 self_multichase -m 1g -H -T 1g
        self_pair multichase:page-local 1 self_multichase -m 1g -H
    else
        note "self: no --multichase PATH; multichase's tests left out"
    fi
    if [ "$n" -ge 2 ] && peer=$(c2c_find_peer 2>/dev/null); then
        self_pair core-to-core-latency:cas 2 self_c2c_peer 1 "$peer" "$pair"
        self_pair core-to-core-latency:store 2 self_c2c_peer 2 "$peer" "$pair"
    else
        note "self: core-to-core-latency not found or one CPU; its tests left out"
    fi
}
