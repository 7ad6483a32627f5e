package silero

// dotGo returns the inner product of a and b[:len(a)] in portable Go.
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// gemvGo is gemv in portable Go.
func gemvGo(w, x, out []float32) {
	cols := len(x)
	for r := range out {
		out[r] = dotGo(w[r*cols:(r+1)*cols], x)
	}
}

// gemm4Go is gemm4 in portable Go.
func gemm4Go(w, x, out []float32) {
	rows, cols := len(out)/4, len(x)/4
	for t := range 4 {
		gemvGo(w[:rows*cols], x[t*cols:(t+1)*cols], out[t*rows:(t+1)*rows])
	}
}
