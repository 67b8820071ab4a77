# shellcheck shell=bash
# Sourced by scripts/bench-peers: numabench latency and mlp next to
# multichase (github.com/google/multichase), alternating rounds, every round
# on stderr, one CSV line per test: peer,test,numabench,peer,ratio. The
# side that runs first swaps every round.
#
# Pairs (same buffer, same page kind, one thread on the first allowed CPU):
#   full-random   numabench latency -s SIZE --pages thp --pattern full-random
#                 multichase -m SIZE -H -T SIZE      (one TLB group: the whole buffer)
#   page-local    numabench latency -s SIZE --pages thp --pattern page-local
#                 multichase -m SIZE -H              (default -T: 64 base pages, 256 KiB)
#   parallelN     numabench mlp -s SIZE --pages thp --pattern page-local -n N
#                 multichase -m SIZE -H -c parallelN (N = 1: -c simple)
# Figures are ns per load: numabench's median of ~10 ms samples (mlp: ns per
# access over all chases), multichase's best of its 0.5 s samples. Each side's
# figure is the median over the rounds. Each round also shows each side's
# spread within the run: numabench's CV over its ~10 ms samples, and the CV
# over multichase's own 0.5 s samples (it runs with -v, which prints them).
# The windows differ: a 0.5 s sample averages out bursts a 10 ms one shows,
# so for the same noise multichase's CV reads lower; where it reads as high
# as numabench's, the noise is slower than half a second. The medians of
# those CVs close each test. Since multichase's figure is a best-of and
# numabench's a median, a second CSV line per test, <test>_median, sets
# numabench's figure beside the median of multichase's own samples: median
# against median, over samples of those two lengths; and a note after it
# gives multichase's figure over the median of its own samples (median over
# the rounds), how far its best-of sits under its median that run. A third
# line, <test>_paired, gives the median of the rounds' own ratios (each
# round's numabench figure over the multichase figure run next to it), with
# the two sides' median figures beside it: where the host's memory speed
# shifts partway through the rounds (it does here, by a fifth, for minutes
# at a time), the ratio of the two medians can take one side's median from
# before the shift and the other's from after, while each round's pair ran
# a few seconds apart.
#
# Settings by environment variable (bench-peers' options stay its own):
#   MC_SIZE    buffer, multichase's syntax (default 1g)
#   MC_ROUNDS  alternating rounds per test (default 5)
#   MC_TESTS   latency,mlp or one of them (default both)
#   MC_CHASES  chase counts for mlp, comma-separated, 1 to 10 (default 1,2,3,4,5,6,7,8,9,10)
#
# Build multichase from its source (not packaged): copy the tree somewhere
# writable and run `make multichase` there (needs gcc and make).

# The figure in column $2 of numabench's CSV in $1, on rows whose column $3
# is $4 (no filter when $3 is empty).
mc_csv_field() {
    awk -F, -v col="$2" -v fcol="$3" -v fval="$4" '
        NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
        /^#/ { next }
        fcol == "" || $h[fcol] == fval { print $h[col]; exit }' "$1"
}

# CV in % of multichase's samples (the lines -v prints, "<ns>  avg=<ns>");
# empty with fewer than two.
mc_cv() {
    awk '/avg=/ { v[++n] = $1 }
         END { if (n < 2) exit
               for (i = 1; i <= n; i++) s += v[i]; m = s / n
               for (i = 1; i <= n; i++) q += (v[i] - m) ^ 2
               printf "%.1f", 100 * sqrt(q / (n - 1)) / m }' "$1"
}

# Median of multichase's samples (the lines -v prints); empty with none.
mc_sample_median() {
    local -a samples
    mapfile -t samples < <(awk '/avg=/ { print $1 }' "$1")
    [ "${#samples[@]}" -eq 0 ] || median "${samples[@]}"
}

# One CSV line: test $1, numabench $2, multichase $3, their ratio.
mc_csv() { ratio_line multichase "$1" "$2" "$3" 2; }

# The last number multichase printed.
mc_figure() { awk '/^ *[0-9]+(\.[0-9]+)? *$/ { v = $1 } END { print v }' "$1"; }

# One pair: $1 test name, $2 numabench args, $3 filter column, $4 filter
# value, $5 multichase args.
mc_pair() {
    local name=$1 nbargs=$2 fcol=$3 fval=$4 mcargs="$5 -v" r nbv mcv nbcv mccv mcmed
    local -a all_nb=() all_mc=() cv_nb=() cv_mc=() med_mc=() best_over_med=() paired=()
    note "$name: $nb $nbargs --csv"
    note "$name: $mc $mcargs"
    for ((r = 1; r <= mc_rounds; r++)); do
        local out="$tmp/mc-nb.csv"
        # Who goes first alternates (ABBA), so neither side always runs
        # right after the other.
        if ((r % 2 == 0)); then
            # shellcheck disable=SC2086
            "$mc" $mcargs >"$tmp/mc.out" 2>&1 || { note "$name: multichase failed:"; show_tail "$tmp/mc.out"; exit 1; }
        fi
        # shellcheck disable=SC2086
        "$nb" $nbargs --csv >"$out" 2>"$tmp/mc-nb.err" || { note "$name: numabench failed:"; show_tail "$tmp/mc-nb.err"; exit 1; }
        nbv=$(mc_csv_field "$out" "$mc_col" "$fcol" "$fval")
        if ((r % 2)); then
            # shellcheck disable=SC2086
            "$mc" $mcargs >"$tmp/mc.out" 2>&1 || { note "$name: multichase failed:"; show_tail "$tmp/mc.out"; exit 1; }
        fi
        mcv=$(mc_figure "$tmp/mc.out")
        [ -n "$nbv" ] || { note "$name: no figure in numabench's CSV:"; show_tail "$out"; exit 1; }
        [ -n "$mcv" ] || { note "$name: no figure from multichase:"; show_tail "$tmp/mc.out"; exit 1; }
        nbcv=$(mc_csv_field "$out" cv_pct "$fcol" "$fval")
        mccv=$(mc_cv "$tmp/mc.out")
        mcmed=$(mc_sample_median "$tmp/mc.out")
        note "$name: round $r/$mc_rounds: numabench $nbv ns (CV ${nbcv:-?}%), multichase $mcv ns (median of its 0.5 s samples ${mcmed:-?}, CV ${mccv:-?}%)"
        [ -z "$mcmed" ] || med_mc+=("$mcmed")
        [ -z "$mcmed" ] || best_over_med+=("$(awk -v a="$mcv" -v b="$mcmed" 'BEGIN { printf "%.3f", a / b }')")
        all_nb+=("$nbv") all_mc+=("$mcv")
        paired+=("$(awk -v a="$nbv" -v b="$mcv" 'BEGIN { printf "%.3f", a / b }')")
        [ -z "$nbcv" ] || cv_nb+=("$nbcv")
        [ -z "$mccv" ] || cv_mc+=("$mccv")
    done
    local a b
    a=$(median "${all_nb[@]}") b=$(median "${all_mc[@]}")
    note "$name: median numabench $a ns (${all_nb[*]}), multichase $b ns (${all_mc[*]})"
    if [ "${#cv_nb[@]}" -gt 0 ] && [ "${#cv_mc[@]}" -gt 0 ]; then
        note "$name: median within-run CV: numabench $(median "${cv_nb[@]}")% (${cv_nb[*]}), multichase $(median "${cv_mc[@]}")% (${cv_mc[*]})"
    fi
    mc_csv "$name" "$a" "$b"
    note "$name: each round's numabench / multichase, median over rounds: $(median "${paired[@]}") (${paired[*]})"
    paired_line multichase "$name" "$a" "$b" "${paired[@]}"
    if [ "${#med_mc[@]}" -ne "$mc_rounds" ]; then
        note "$name: multichase printed no samples in $((mc_rounds - ${#med_mc[@]})) round(s); no ${name}_median line"
    else
        b=$(median "${med_mc[@]}")
        note "$name: median numabench $a ns, median over rounds of multichase's sample medians $b ns (${med_mc[*]})"
        # How far multichase's best of five sits under its own median: the
        # part of the first ratio that is the statistic, not the tools.
        note "$name: multichase's figure / the median of its own samples, median over rounds: $(median "${best_over_med[@]}") (${best_over_med[*]})"
        mc_csv "${name}_median" "$a" "$b"
    fi
}

run_multichase_pairs() {
    [ -n "${mc:-}" ] || die "--peer multichase needs --multichase PATH (a multichase binary; build it with 'make multichase' in a copy of its source)"
    [ -x "$mc" ] || die "multichase binary '$mc' not found or not executable"
    local size=${MC_SIZE:-1g} tests=${MC_TESTS:-latency,mlp} chases=${MC_CHASES:-1,2,3,4,5,6,7,8,9,10}
    mc_rounds=${MC_ROUNDS:-5}
    is_uint "$mc_rounds" && [ "$mc_rounds" -gt 0 ] || die "MC_ROUNDS wants a positive number, got '$mc_rounds'"
    [[ $size =~ ^[0-9]+[kmgKMG]?$ ]] || die "MC_SIZE wants a size such as 1g or 256m, got '$size'"
    "$nb" latency --help >/dev/null 2>&1 || die "$nb has no working 'latency' command"
    note "multichase: $mc; numabench: $nb; buffer $size, THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')"
    note "multichase pairs: median over $mc_rounds alternating rounds (numabench, multichase, ...); ns per load"
    local t
    IFS=, read -r -a mc_tests <<<"$tests"
    for t in "${mc_tests[@]}"; do
        case $t in
            latency)
                mc_col=latency_ns
                mc_pair full-random "latency -s $size --pages thp --pattern full-random" "" "" "-m $size -H -T $size"
                mc_pair page-local "latency -s $size --pages thp --pattern page-local" "" "" "-m $size -H"
                ;;
            mlp)
                mc_col=ns_per_access
                local n
                IFS=, read -r -a ns <<<"$chases"
                for n in "${ns[@]}"; do
                    is_uint "$n" && [ "$n" -ge 1 ] && [ "$n" -le 10 ] || die "MC_CHASES: $n is not 1 to 10 (multichase's parallel chases)"
                    local c=parallel$n
                    [ "$n" = 1 ] && c=simple
                    mc_pair "parallel$n" "mlp -s $size --pages thp --pattern page-local -n $n" chases "$n" "-m $size -H -c $c"
                done
                ;;
            *) die "MC_TESTS: unknown test '$t' (latency, mlp)" ;;
        esac
    done
}
