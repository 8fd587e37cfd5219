# Web-search flow sizes, as published with the DCTCP workload (Alizadeh et al., SIGCOMM 2010).
# One point per line: flow size in bytes, cumulative probability. Linear interpolation between
# points. Read by qr_cdf_load() (core/include/qreplay/workload.h); [traffic] size_cdf names it.
0 0
10000 0.15
20000 0.2
30000 0.3
50000 0.4
80000 0.53
200000 0.6
1000000 0.7
2000000 0.8
5000000 0.9
10000000 0.97
30000000 1.0
