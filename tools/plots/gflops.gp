# GFLOP/s against N for the two kernels and cuBLAS, from a pipelined_gemm CSV.
# gnuplot -e "in='RUN.csv'; out='OUT.svg'; gpu='NVIDIA H200'; narrow=0" tools/plots/gflops.gp
# narrow=1 draws the phone version: 360 units wide with 13-unit text, so on
# a 375 px phone the text is 12.4 px in the 343 px column and still 11.6 px
# in the 320 px inside a fold; the wide version (720 units, 13-unit text)
# is shown from a 672 px viewport up (text 11.5 px or more).
# values='FILE' also writes the plotted numbers to FILE as a tab-separated
# table (a header line of column labels, then one row per N).
# The CSV's '#' provenance lines are comments to gnuplot; its header row
# names the columns used below.
if (!exists("narrow")) narrow = 0
if (narrow) {
    set terminal svg size 360,460 dynamic font "sans,13" background "white"
    set key below vertical Left reverse nobox maxrows 3 width -2 height 1.5
    set xlabel "matrix size N (N × N × N)"
    set ylabel "GFLOP/s (median)"
    set title sprintf("FP32 GEMM, %s", gpu)
    set format y "%.0fk"
    ydiv = 1000.0
    set lmargin 7
    set rmargin 2
} else {
    set terminal svg size 720,420 dynamic font "sans,13" background "white"
    set key bottom right box opaque
    set xlabel "matrix size N (N × N × N product)"
    set ylabel "GFLOP/s (median of the timed launches)"
    set title sprintf("FP32 GEMM on %s, -arch=sm_80 build", gpu)
    set format y "%.0f"
    ydiv = 1.0
}
set output out
set datafile separator ","
set termoption noenhanced
set logscale x 2
set xtics ("512" 512, "1024" 1024, "2048" 2048, "4096" 4096)
set xrange [400:5200]
set yrange [0:*]
set grid ytics lc rgb "#dddddd"
plot in using (column("n")):(column("cublas_gflops")/ydiv) with linespoints lw 2 pt 9 ps 1.2 lc rgb "#555555" title "cuBLAS SGEMM (FP32, no TF32)", \
     in using (column("n")):(column("piped_gflops")/ydiv) with linespoints lw 2 pt 7 ps 1.2 lc rgb "#1b6ac9" title "matmulTilePiped (cp.async, 2 stages)", \
     in using (column("n")):(column("sync_gflops")/ydiv) with linespoints lw 2 pt 5 ps 1.2 lc rgb "#d9541e" title "matmulTileSync (through registers)"
if (exists("values")) {
    set table $rows separator tab
    plot in using (column("n")):(column("cublas_gflops")):(column("piped_gflops")):(column("sync_gflops")) with table
    unset table
    set print values
    print "N\tcuBLAS SGEMM GFLOP/s\tmatmulTilePiped GFLOP/s\tmatmulTileSync GFLOP/s"
    print $rows
    unset print
}
