# shellcheck shell=bash
# Sourced by scripts/bench-peers for `--peer likwid-best`: numabench's BEST
# kernel of an access pattern next to likwid-bench's BEST kernel of the same
# pattern, whatever instruction set or store kind each side's best uses.
#
# Patterns and the candidates of each side (only those this CPU and each tool
# can run):
#   read   numabench read_<isa>               likwid load, load_<isa>, load_mem
#   copy   numabench copy[_nt]_<isa>          likwid copy[_<isa>], copy_mem[_<isa>]
#   triad  numabench triad[_nt]_<isa>         likwid stream[_<isa>], stream_mem[_<isa>]
#   write  numabench write[_nt]_<isa>         likwid store[_<isa>], store_mem[_<isa>]
# (triad: a = b + s*c, 3 streams, 24 bytes per element on both sides; likwid's
# own 'triad' is a 4-stream kernel and not used.)
#
# Flow per pattern and thread count: a screening pass runs every candidate of
# both sides (--screen N times, alternating numabench and likwid-bench) and
# keeps each side's fastest; then --rounds alternating rounds of the two
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
# Needs from bench-peers: nb, nb_extra, tmp, tries, rounds, size_mib,
# thread_counts, has_test, isa_ok, parse_numabench, median, note, fail,
# show_tail.

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
    local -a cmd=("$nb" sweep -o "$op" -s "$per_kib" -p "$t" -r "$tries" --csv --kernel-variant "$variant")
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

# Prints "<best candidate> <its figure>" from "name figure" lines on stdin.
lb_pick() { sort -k2,2gr | head -n1; }

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
            : >"$tmp/lb-nb-screen"
            : >"$tmp/lb-lw-screen"
            for ((i = 1; i <= lb_screen; i++)); do
                for ((c = 0; c < ${#nb_cands[@]} || c < ${#lw_cands[@]}; c++)); do
                    if [ "$c" -lt "${#nb_cands[@]}" ]; then
                        v=$(lb_nb_run "$op" "${nb_cands[$c]}" "$per_kib" "$t") || exit 1
                        note "$name: screen $i: numabench ${nb_cands[$c]} $v MB/s"
                        echo "${nb_cands[$c]} $v" >>"$tmp/lb-nb-screen"
                    fi
                    if [ "$c" -lt "${#lw_cands[@]}" ]; then
                        # A test likwid-bench lists but cannot run (its
                        # scalar stream_mem aborts here) is left out, named.
                        if v=$(lb_lw_run "${lw_cands[$c]}" "$lw_size" "$t"); then
                            note "$name: screen $i: likwid-bench ${lw_cands[$c]} $v MB/s"
                            echo "${lw_cands[$c]} $v" >>"$tmp/lb-lw-screen"
                        else
                            note "$name: screen $i: likwid-bench ${lw_cands[$c]} failed; left out"
                        fi
                    fi
                done
            done
            read -r nb_w _ < <(lb_pick <"$tmp/lb-nb-screen")
            read -r lw_w _ < <(lb_pick <"$tmp/lb-lw-screen") || fail "$name: no likwid-bench candidate ran"
            note "$name: best after screening: numabench $nb_w, likwid-bench $lw_w"
            local -a nb_runs=() lw_runs=()
            for ((r = 1; r <= rounds; r++)); do
                # Who goes first alternates (ABBA), so neither side always
                # runs on the machine the other has just warmed or heated.
                if ((r % 2)); then
                    nb_best=$(lb_nb_run "$op" "$nb_w" "$per_kib" "$t") || exit 1
                    lw_best=$(lb_lw_run "$lw_w" "$lw_size" "$t") || exit 1
                else
                    lw_best=$(lb_lw_run "$lw_w" "$lw_size" "$t") || exit 1
                    nb_best=$(lb_nb_run "$op" "$nb_w" "$per_kib" "$t") || exit 1
                fi
                nb_runs+=("$nb_best")
                lw_runs+=("$lw_best")
                note "$name: round $r/$rounds ($( ((r % 2)) && echo "numabench first" || echo "likwid-bench first")): numabench $nb_w $nb_best MB/s, likwid-bench $lw_w $lw_best MB/s"
            done
            local mn ml
            mn=$(median "${nb_runs[@]}")
            ml=$(median "${lw_runs[@]}")
            note "$name: medians: numabench $nb_w $mn MB/s, likwid-bench $lw_w $ml MB/s (rounds: numabench ${nb_runs[*]}; likwid-bench ${lw_runs[*]})"
            awk -v n="$name" -v a="$mn" -v b="$ml" \
                'BEGIN { printf "likwid-best,%s,%.1f,%.1f,%.3f\n", n, a, b, (b > 0 ? a / b : 0) }'
        done
    done
}
