# shellcheck shell=bash
# Sourced by scripts/bench-peers for `--peer likwid-best`: numabench's BEST
# kernel of an access pattern next to likwid-bench's BEST kernel of the same
# pattern, whatever instruction set or store kind each side's best uses.
#
# Patterns and the candidates of each side (only those this CPU and each tool
# can run):
#   read   numabench read[_s8][_nt]_<isa>     likwid load, load_<isa>, load_mem
#   copy   numabench copy[_nt|_s4_nt]_<isa>   likwid copy[_<isa>], copy_mem[_<isa>]
#   triad  numabench triad[_nt]_<isa>         likwid stream[_<isa>], stream_mem[_<isa>]
#   write  numabench write[_nt]_<isa>         likwid store[_<isa>], store_mem[_<isa>]
# (triad: a = b + s*c, 3 streams, 24 bytes per element on both sides; likwid's
# own 'triad' is a 4-stream kernel and not used.)
#
# Flow per pattern and thread count: a screening pass runs every candidate of
# both sides (--screen N times, alternating numabench and likwid-bench) and
# keeps each side's fastest by the median of its passes (one lucky pass
# must not pick a kernel: numabench has twice likwid-bench's candidates, so
# a best single pass would pick a lucky one more often). With two threads on
# a 2-CPU machine each screening run is bracketed by a handoff timing, and
# candidates are compared only over the runs that met the placement most
# runs met (a kernel screened while the host ran the two CPUs on two dies
# reads half again what it reads on one; a candidate none of whose runs
# met it is run again, up to 3 times, until one does, so the host's moves
# never drop a kernel unseen); then --rounds alternating rounds of the two
# winners, every round printed, the side that runs first swapping every
# round. Reported: each side's MEDIAN over the rounds
# (this machine's 2-thread bandwidth is bimodal, so a best-of would reward
# the lucky side) and ratio = numabench / likwid-bench.
#
# Counting and sizes as the other likwid pairs: STREAM bytes (read + written,
# no write-allocate), MB = 10^6 bytes; the same working set on both sides
# (--size MiB, all arrays and threads together), each thread first-touching
# its own chunks.
#
# Settings by environment variable (bench-peers' options stay its own):
#   LB_NUMABENCH  numabench kernels to consider, comma-separated (default all
#                 of the pattern this CPU runs), e.g. read_nt_avx2
#   LB_LIKWID     likwid-bench tests to consider, e.g. load_mem
# A name that is not a candidate of the pattern is an error, so a typo never
# turns into a silent comparison against something else.
#
# Where the host places the CPUs (two threads on a 2-CPU machine, the
# development VM's case; with more CPUs each tool picks its own, and nothing
# is timed): in a virtual machine the host may run the two virtual CPUs as
# SMT siblings of one core, on two cores of one die, or on two dies, and may
# move them while a test runs; the bandwidth of a 2-thread run follows that
# (on the development VM a cache-line handoff between its two CPUs read about
# 10, 27 or 105 ns at different moments, and 2-thread reads moved 23-35 GB/s
# on one die and up to 47 GB/s across two, on either tool). Before and after
# every run the script times that handoff (`numabench c2c --variant cas`, 20
# samples, a few ms) and prints it with the round. A run whose two handoffs
# agree within 1.3x most likely ran in one placement (the host can move the
# CPUs and back between two probes); such runs are grouped by placement
# (handoffs within 1.3x of each other) and, per group where both sides have
# runs, each side's median is printed with the CSV line <test>@<ns>ns: the
# two tools compared with the CPUs placed alike.
#
# Needs from bench-peers: nb, nb_extra, tmp, tries, rounds, size_mib,
# thread_counts, has_test, isa_ok, parse_numabench, median, ratio_line,
# note, fail, show_tail.

lb_nb_op() { echo "$1"; }
lb_families() {
    case $1 in
        read) echo "load load_mem" ;;
        copy) echo "copy copy_mem" ;;
        triad) echo "stream stream_mem" ;;
        write) echo "store store_mem" ;;
    esac
}
lb_streams() { case $1 in read | write) echo 1 ;; copy) echo 2 ;; triad) echo 3 ;; esac; }

# likwid-bench tests of a pattern this CPU can run.
lb_likwid_candidates() {
    local fam isa name
    for fam in $(lb_families "$1"); do
        for isa in scalar sse avx avx512; do
            isa_ok "$isa" || continue
            name=$fam
            [ "$isa" = scalar ] || name=${fam}_$isa
            has_test "$name" && echo "$name"
        done
    done
}

# numabench kernels of a pattern this CPU can run (from --list-kernels).
lb_nb_candidates() {
    awk -v op="$1" 'NR > 1 && $2 == op && $NF == "yes" { print $1 }' "$tmp/lb-kernels"
}

# One numabench run: prints MB/s, or fails.
lb_nb_run() {
    local op=$1 variant=$2 per_kib=$3 t=$4 res
    local -a cmd=("$nb" sweep --op "$op" --buffer-kib "$per_kib" --threads "$t" -r "$tries" --csv --kernel-variant "$variant")
    [ "${#nb_extra[@]}" = 0 ] || cmd+=("${nb_extra[@]}")
    if ! "${cmd[@]}" >"$tmp/lb-nb.out" 2>"$tmp/lb-nb.err"; then
        note "numabench failed: ${cmd[*]}"
        show_tail "$tmp/lb-nb.err"
        return 1
    fi
    res=$(parse_numabench "$tmp/lb-nb.out" "$per_kib") || { note "cannot read numabench's CSV: $res"; return 1; }
    echo "${res%% *}"
}

# One likwid-bench run: prints MB/s, or fails.
lb_lw_run() {
    local test=$1 size=$2 t=$3 bw
    if ! likwid-bench -t "$test" -W "N:$size:$t" >"$tmp/lb-lw.out" 2>&1; then
        note "likwid-bench failed: likwid-bench -t $test -W N:$size:$t"
        show_tail "$tmp/lb-lw.out"
        return 1
    fi
    bw=$(awk -F: '/^MByte\/s:/ { gsub(/[ \t]/, "", $2); print $2 }' "$tmp/lb-lw.out")
    [ -n "$bw" ] || { note "no 'MByte/s:' line from likwid-bench -t $test"; show_tail "$tmp/lb-lw.out"; return 1; }
    echo "$bw"
}

# Narrows the array named $1 to the comma-separated list $3 (unchanged when
# empty); $2 names the setting for the error. Runs in the main shell so that
# a bad name stops the script.
lb_narrow() {
    local -n arr=$1
    local side=$2 want=$3 c
    local -a names=() kept=()
    [ -n "$want" ] || return 0
    IFS=, read -r -a names <<<"$want"
    for c in "${names[@]}"; do
        [[ " ${arr[*]} " == *" $c "* ]] || fail "$side: '$c' is not a candidate here (candidates: ${arr[*]})"
        kept+=("$c")
    done
    arr=("${kept[@]}")
}

# The first two CPUs this process may use, as "A,B" (empty with one CPU).
lb_first_pair() {
    awk -F: '/^Cpus_allowed_list/ {
        gsub(/[ \t]/, "", $2); n = split($2, parts, ",")
        for (i = 1; i <= n && got < 2; i++) {
            m = split(parts[i], r, "-"); hi = (m > 1 ? r[2] : r[1])
            for (c = r[1]; c <= hi && got < 2; c++) cpus[got++] = c
        }
        if (got == 2) print cpus[0] "," cpus[1]
    }' /proc/self/status
}

# One-way cache-line handoff between the CPUs of $lb_pair in ns (median of
# 20 samples of 1000 round trips); empty where it cannot be measured.
lb_handoff() {
    [ -n "$lb_pair" ] || return 0
    local out
    # A failed timing leaves the round without a handoff (the reason is in
    # the log); it never stops the comparison.
    out=$("$nb" c2c --variant cas --cpus "$lb_pair" -i 1000 --samples 20 --csv 2>"$tmp/lb-c2c.err") || {
        note "handoff between CPUs $lb_pair not timed: $(tail -n 1 "$tmp/lb-c2c.err")"
        return 0
    }
    awk -F, '/^#/ { next }
             !seen++ { for (i = 1; i <= NF; i++) h[$i] = i; next }
             !done++ && h["latency_ns"] { print $h["latency_ns"] }' <<<"$out"
}

# "lo-hi" of two handoffs ("-" where either is missing).
lb_span() {
    if [ -n "$1" ] && [ -n "$2" ]; then
        awk -v a="$1" -v b="$2" 'BEGIN { lo = a; hi = b; if (b < a) { lo = b; hi = a }; printf "%.1f-%.1f", lo, hi }'
    else
        echo "-"
    fi
}

# Lines on stdin whose last field is "lo-hi" handoffs, labelled by
# placement: "<group> <the other fields>" for each steady one. Runs whose
# handoffs differ by more than 1.3x (or are missing) are left out; the rest
# are sorted by their slower handoff and a group (named by its first
# handoff, in ns) starts wherever one exceeds 1.3x of the group's first.
lb_steady_groups() {
    awk '{ split($NF, h, "-"); if (h[2] == "" || h[2] + 0 > 1.3 * h[1]) next
           $NF = ""; sub(/ +$/, ""); print h[2], $0 }' |
        sort -g |
        awk 'NR == 1 || $1 > 1.3 * first { first = $1 }
             { $1 = sprintf("%.0f", first); print }'
}

# Per placement group, "<handoff ns> <numabench median> <runs> <likwid-bench
# median> <runs>", from "<side> <MB/s> <lo-hi handoffs>" lines on stdin
# (side nb or lw), grouped by lb_steady_groups.
lb_placement_groups() {
    local g
    local -a labelled nbv lwv
    mapfile -t labelled < <(lb_steady_groups)
    for g in $(printf '%s\n' "${labelled[@]}" | awk 'NF { print $1 }' | uniq); do
        mapfile -t nbv < <(printf '%s\n' "${labelled[@]}" | awk -v g="$g" '$1 == g && $2 == "nb" { print $3 }')
        mapfile -t lwv < <(printf '%s\n' "${labelled[@]}" | awk -v g="$g" '$1 == g && $2 == "lw" { print $3 }')
        [ "${#nbv[@]}" -gt 0 ] && [ "${#lwv[@]}" -gt 0 ] || continue
        echo "$g $(median "${nbv[@]}") ${#nbv[@]} $(median "${lwv[@]}") ${#lwv[@]}"
    done
}

# One CSV line: test $1, numabench $2, likwid-bench $3, their ratio.
lb_csv() { ratio_line likwid-best "$1" "$2" "$3" 1; }

# Prints "<best candidate> <its figure>" from "name figure" lines on stdin:
# the candidate whose median over its lines is highest, and that median.
lb_pick() {
    local lines name
    lines=$(cat)
    for name in $(awk '{ print $1 }' <<<"$lines" | sort -u); do
        # shellcheck disable=SC2046 # one figure per word
        echo "$name $(median $(awk -v n="$name" '$1 == n { print $2 }' <<<"$lines"))"
    done | sort -k2,2gr | head -n1
}

# One screening run of candidate $2 of side $1 (nb or lw), bracketed by
# handoff timings where a pair is timed, appended to $tmp/lb-screen as
# "<side> <name> <MB/s> <lo-hi handoffs>" and noted with label $3. A
# likwid-bench test it lists but cannot run (its scalar stream_mem aborts
# here) is left out, named; a numabench failure stops the comparison.
# Uses the caller's op, per_kib, t, lw_size and name.
lb_screen_run() {
    local side=$1 cand=$2 label=$3 h0 h1 v tool
    h0=$(lb_handoff)
    if [ "$side" = nb ]; then
        tool=numabench
        v=$(lb_nb_run "$op" "$cand" "$per_kib" "$t") || exit 1
    else
        tool=likwid-bench
        v=$(lb_lw_run "$cand" "$lw_size" "$t") || {
            note "$name: $label: likwid-bench $cand failed; left out"
            return 0
        }
    fi
    h1=$(lb_handoff)
    note "$name: $label: $tool $cand $v MB/s${lb_pair:+; handoff ns $(lb_span "$h0" "$h1")}"
    echo "$side $cand $v $(lb_span "$h0" "$h1")" >>"$tmp/lb-screen"
}

# Every candidate that ran in screening but never in placement group $1
# (its runs fell in another placement, or were unsteady) is run again, up
# to 3 times, until one run lands there; one that still does not is
# compared over all of its runs, and says so. Without this the host's
# placement, not the kernel, could drop a side's fastest candidate.
# Appends to $tmp/lb-screen-kept; uses the caller's op, per_kib, t,
# lw_size, name and lb_pair.
lb_fill_placement() {
    local group=$1 side cand try line entry
    local -a ran
    # Read up front: the runs below must not see the list on their stdin.
    mapfile -t ran < <(awk '{ print $1, $2 }' "$tmp/lb-screen" | sort -u)
    for entry in "${ran[@]}"; do
        read -r side cand <<<"$entry"
        awk -v s="$side" -v c="$cand" '$1 == s && $2 == c' "$tmp/lb-screen-kept" | grep -q . && continue
        for ((try = 1; try <= 3; try++)); do
            lb_screen_run "$side" "$cand" "again in the ~$group ns placement, try $try"
            line=$(tail -n 1 "$tmp/lb-screen" | awk -v s="$side" -v c="$cand" -v g="$group" '
                $1 == s && $2 == c { split($4, h, "-")
                    if (h[2] != "" && h[2] + 0 <= 1.3 * h[1] && h[2] + 0 <= 1.3 * g && h[2] * 1.3 >= g) print $1, $2, $3 }')
            if [ -n "$line" ]; then
                echo "$line" >>"$tmp/lb-screen-kept"
                continue 2
            fi
        done
        note "$name: $cand never ran in the ~$group ns placement; compared over all of its runs"
        awk -v s="$side" -v c="$cand" '$1 == s && $2 == c { print $1, $2, $3 }' "$tmp/lb-screen" >>"$tmp/lb-screen-kept"
    done
}

run_likwid_best() {
    local patterns=$1 pattern t streams per_kib total lw_size op c i r
    local nb_best lw_best nb_w lw_w v
    "$nb" sweep --list-kernels >"$tmp/lb-kernels" 2>/dev/null ||
        fail "$nb sweep --list-kernels failed"
    note "likwid-best: numabench's best kernel vs likwid-bench's best kernel per pattern; screening x$lb_screen, then $rounds alternating rounds of the two winners; medians reported"
    IFS=, read -r -a lb_patterns <<<"$patterns"
    for pattern in "${lb_patterns[@]}"; do
        case $pattern in read | copy | triad | write) ;; *) die "unknown pattern '$pattern' in --patterns (read, copy, triad, write)" ;; esac
    done
    for pattern in "${lb_patterns[@]}"; do
        op=$(lb_nb_op "$pattern")
        streams=$(lb_streams "$pattern")
        mapfile -t lw_cands < <(lb_likwid_candidates "$pattern")
        mapfile -t nb_cands < <(lb_nb_candidates "$op")
        lb_narrow lw_cands LB_LIKWID "${LB_LIKWID:-}"
        lb_narrow nb_cands LB_NUMABENCH "${LB_NUMABENCH:-}"
        [ "${#lw_cands[@]}" -gt 0 ] || fail "likwid-bench has no $pattern test this CPU runs"
        [ "${#nb_cands[@]}" -gt 0 ] || fail "numabench has no $op kernel this CPU runs"
        for t in "${thread_counts[@]}"; do
            local name="${pattern}_${t}t"
            per_kib=$(( size_mib * 1024 / (streams * t) ))
            total=$(( per_kib * 1024 * streams * t ))
            if [ "$total" -le 2147483647 ]; then
                lw_size="${total}B"
            else
                per_kib=$(( per_kib / 125 * 125 ))
                total=$(( per_kib * 1024 * streams * t ))
                lw_size="$(( total / 1000 ))kB"
            fi
            note "$name: $per_kib KiB per thread per array x $streams arrays x $t threads = $total bytes"
            note "$name: candidates: numabench ${nb_cands[*]}; likwid-bench ${lw_cands[*]}"
            local -a nb_runs=() lw_runs=() nb_pairs=() lw_pairs=()
            local h0 h1 h2 placed lb_pair group side
            # Timed only where the pair is what both tools ran on: two
            # threads on a machine that allows two CPUs (with more, each
            # tool picks its own CPUs).
            lb_pair=""
            if [ "$t" = 2 ] && [ "$(nproc)" = 2 ]; then
                lb_pair=$(lb_first_pair)
            fi
            : >"$tmp/lb-screen"
            for ((i = 1; i <= lb_screen; i++)); do
                for ((c = 0; c < ${#nb_cands[@]} || c < ${#lw_cands[@]}; c++)); do
                    [ "$c" -lt "${#nb_cands[@]}" ] && lb_screen_run nb "${nb_cands[$c]}" "screen $i"
                    [ "$c" -lt "${#lw_cands[@]}" ] && lb_screen_run lw "${lw_cands[$c]}" "screen $i"
                done
            done
            # Where the host moved the two CPUs during screening, kernels
            # are compared within one placement: the one most screening
            # runs met.
            group=""
            if [ -n "$lb_pair" ]; then
                lb_steady_groups <"$tmp/lb-screen" >"$tmp/lb-screen-g"
                group=$(awk '{ n[$1]++ } END { for (g in n) print n[g], g }' "$tmp/lb-screen-g" | sort -k1,1nr -k2,2g | awk 'NR == 1 { print $2 }')
            fi
            if [ -n "$group" ]; then
                note "$name: screening compared within the placement most of its runs met (~$group ns handoff, $(awk -v g="$group" '$1 == g' "$tmp/lb-screen-g" | wc -l) of $(wc -l <"$tmp/lb-screen") runs)"
                awk -v g="$group" '$1 == g { print $2, $3, $4 }' "$tmp/lb-screen-g" >"$tmp/lb-screen-kept"
            else
                cp "$tmp/lb-screen" "$tmp/lb-screen-kept"
            fi
            [ -z "$group" ] || lb_fill_placement "$group"
            read -r nb_w _ < <(awk '$1 == "nb" { print $2, $3 }' "$tmp/lb-screen-kept" | lb_pick)
            read -r lw_w _ < <(awk '$1 == "lw" { print $2, $3 }' "$tmp/lb-screen-kept" | lb_pick) || fail "$name: no likwid-bench candidate ran"
            note "$name: best after screening: numabench $nb_w, likwid-bench $lw_w"
            for ((r = 1; r <= rounds; r++)); do
                # Who goes first alternates (ABBA), so neither side always
                # runs on the machine the other has just warmed or heated.
                h0=$(lb_handoff)
                if ((r % 2)); then
                    nb_best=$(lb_nb_run "$op" "$nb_w" "$per_kib" "$t") || exit 1
                    h1=$(lb_handoff)
                    lw_best=$(lb_lw_run "$lw_w" "$lw_size" "$t") || exit 1
                    h2=$(lb_handoff)
                    nb_pairs+=("$(lb_span "$h0" "$h1")") lw_pairs+=("$(lb_span "$h1" "$h2")")
                else
                    lw_best=$(lb_lw_run "$lw_w" "$lw_size" "$t") || exit 1
                    h1=$(lb_handoff)
                    nb_best=$(lb_nb_run "$op" "$nb_w" "$per_kib" "$t") || exit 1
                    h2=$(lb_handoff)
                    lw_pairs+=("$(lb_span "$h0" "$h1")") nb_pairs+=("$(lb_span "$h1" "$h2")")
                fi
                nb_runs+=("$nb_best")
                lw_runs+=("$lw_best")
                placed=""
                [ -z "$lb_pair" ] || placed="; CPUs $lb_pair handoff ns: numabench's run ${nb_pairs[-1]}, likwid-bench's ${lw_pairs[-1]}"
                note "$name: round $r/$rounds ($( ((r % 2)) && echo "numabench first" || echo "likwid-bench first")): numabench $nb_w $nb_best MB/s, likwid-bench $lw_w $lw_best MB/s$placed"
            done
            local mn ml
            mn=$(median "${nb_runs[@]}")
            ml=$(median "${lw_runs[@]}")
            note "$name: medians: numabench $nb_w $mn MB/s, likwid-bench $lw_w $ml MB/s (rounds: numabench ${nb_runs[*]}; likwid-bench ${lw_runs[*]})"
            lb_csv "$name" "$mn" "$ml"
            if [ -n "$lb_pair" ]; then
                local ns nmed ncount lmed lcount
                for i in "${!nb_runs[@]}"; do
                    echo "nb ${nb_runs[$i]} ${nb_pairs[$i]}"
                    echo "lw ${lw_runs[$i]} ${lw_pairs[$i]}"
                done | lb_placement_groups >"$tmp/lb-groups"
                if [ ! -s "$tmp/lb-groups" ]; then
                    # A missing handoff is "-", a timed one "lo-hi".
                    if ! grep -q '[0-9]' <<<"${nb_pairs[*]} ${lw_pairs[*]}"; then
                        note "$name: no handoff could be timed; no like-for-like line"
                    else
                        note "$name: no placement in which both sides ran steadily; no like-for-like line"
                    fi
                fi
                while read -r ns nmed ncount lmed lcount; do
                    note "$name: CPUs $lb_pair at ~$ns ns handoff, steady runs: numabench $ncount, median $nmed MB/s; likwid-bench $lcount, median $lmed MB/s"
                    lb_csv "${name}@${ns}ns" "$nmed" "$lmed"
                done <"$tmp/lb-groups"
            fi
        done
    done
}
