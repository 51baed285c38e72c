# bench/gpu/ncu_times.awk - Nsight Compute's gpu__time_duration.sum rows of
# `ncu --metrics gpu__time_duration.sum --csv` ("ID","Process ID",...,
# "Kernel Name",...,"Metric Name","Metric Unit","Metric Value"), one line a
# launch: the kernel's name (without its parameters), the launch's number
# for that kernel, its duration in us.  awk -F'","' -f ncu_times.awk CSV
/^"ID"/ {
	for (i = 1; i <= NF; i++) {
		h = $i
		gsub(/"/, "", h)
		c[h] = i
	}
	next
}
/^"/ && c["Metric Value"] {
	m = $c["Metric Name"]
	if (m != "gpu__time_duration.sum")
		next
	k = $c["Kernel Name"]
	sub(/\(.*/, "", k)
	u = $c["Metric Unit"]
	x = $c["Metric Value"]
	gsub(/[",]/, "", x)
	x = u ~ /^n/ ? x / 1000 : u ~ /^m/ ? x * 1000 : x + 0
	print k, ++n[k], x
}
