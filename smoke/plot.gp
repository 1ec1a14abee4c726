# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Plots of a make bench run, from the .dat files bench_report.py writes:
#   gnuplot -e "dir='results/<timestamp>'" smoke/plot.gp
# throughput.png, latency_cdf.png and cpu_per_call.png (when the run had
# matrix cells), loaded.png and routes.png (the loaded host, the route
# table) land in dir.

if (!exists("dir")) dir = "."

set terminal pngcairo size 1200,700 font ",9" noenhanced
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top right

sizes = system("cat ".dir."/sizes.txt")
if (sizes ne "") {
	# ---- calls/s by transport: one panel per daemon mode and payload size ----
	set output dir."/throughput.png"
	set multiplot layout 2,words(sizes) title "calls/s, all clients together; red: socket, blue: shm memfd, green: shm memzone\nDxC: D requests in flight per client, C clients"
	set logscale y
	set format y "%.0s%c"
	set yrange [100:*]
	set tmargin 3
	# One legend for all the panels, in the title.
	unset key
	do for [mode in "spinning sleeping"] {
		do for [size in sizes] {
			set title sprintf("daemon %s, %s bytes", mode, size)
			plot dir."/throughput-".mode."-z".size.".dat" \
				using 2:xtic(1) title "socket" lc rgb "#c0504d", \
				'' using 3 title "shm memfd" lc rgb "#4f81bd", \
				'' using 4 title "shm memzone" lc rgb "#9bbb59"
		}
	}
	unset multiplot
	unset tmargin
	set key default

	# ---- latency CDF, one client, one in flight, 64 bytes ----
	set output dir."/latency_cdf.png"
	set terminal pngcairo size 900,550 font ",9" noenhanced
	set title "round-trip latency, 1 client, 1 in flight, 64 bytes (GR_PING2)"
	set logscale x
	unset logscale y
	set format x "%.0s%cs"
	set format y "%.2f"
	set xlabel "round trip (s)"
	set ylabel "fraction of calls at or below"
	set yrange [0:1]
	set key bottom right
	set grid xtics ytics
	files = system("ls ".dir."/cdf-*.dat")
	# Nanoseconds in the files, seconds on the axis (the %c prefix does the rest).
	plot for [f in files] f using ($1 * 1e-9):2 with steps lw 2 \
		title f[strlen(dir) + 6 : strlen(f) - 4]
	unset logscale x
	unset xlabel
	unset ylabel
	unset yrange
	set grid noxtics ytics

	# ---- CPU per call, client and daemon ----
	set output dir."/cpu_per_call.png"
	set terminal pngcairo size 1100,500 font ",9" noenhanced
	set style data histogram
	set multiplot layout 1,2 title "CPU time per call, 1 client, 64 bytes"
	set logscale y
	set format y "%.0s%cs"
	set xtics rotate by -30
	set key top right
	do for [depth in "1 32"] {
		set title sprintf("%s in flight", depth)
		plot dir."/cpu-d".depth.".dat" \
			using ($2 * 1e-9):xtic(1) title "client" lc rgb "#4f81bd", \
			'' using ($3 * 1e-9) title "daemon" lc rgb "#c0504d"
	}
	unset multiplot
}

# ---- the loaded host: shm over socket, busy and occasional ----
if (system("test -s ".dir."/loaded.dat && echo 1") eq "1") {
	set output dir."/loaded.png"
	set terminal pngcairo size 1200,500 font ",9" noenhanced
	set multiplot layout 1,2 title "the loaded host: shared memory over the socket, one client, default options"
	set title "calls back to back: shm calls/s / socket calls/s (above 1: shm faster)"
	set logscale y
	set format y "%g"
	set yrange [0.1:*]
	# The event-loop client's ratios, when its cells ran (else NaN: no bars).
	evloop = system("awk '!/^#/ && $3 != \"NaN\" { n++ } END { print n + 0 }' ".dir."/loaded.dat")
	eval "plot dir.'/loaded.dat' using 2:xtic(1) title 'blocking client' lc rgb '#4f81bd'" \
		.(evloop > 0 ? ", '' using 3 title 'event-loop client' lc rgb '#8064a2'" : "")
	set title "an occasional call: shm p50 / socket p50 (below 1: shm faster)"
	unset logscale y
	set yrange [0:*]
	plot dir."/loaded.dat" using 4:xtic(1) title "after 20 ms" lc rgb "#9bbb59", \
		'' using 5 title "after 300 ms" lc rgb "#c0504d", 1 with lines dt 2 lc rgb "black" notitle
	unset multiplot
}

# ---- the route table: routes/s per run, each transport, and the reference ----
if (system("test -s ".dir."/routes.dat && echo 1") eq "1") {
	set output dir."/routes.png"
	set terminal pngcairo size 900,500 font ",9" noenhanced
	set title "route table: routes/s into examples/route_table (log scale)"
	set logscale y
	set format y "%g"
	set yrange [*:*]
	set style fill solid 0.8 border -1
	set key top left
	plot dir."/routes.dat" using 2:xtic(1) title "shm" lc rgb "#4f81bd", \
		'' using 3 title "socket" lc rgb "#c0504d", \
		'' using 4 with lines dt 2 lc rgb "black" title "in-process reference (insertions)"
}
