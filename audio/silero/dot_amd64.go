package silero

import "golang.org/x/sys/cpu"

// hasFMA: the CPU runs the assembly kernels (AVX2 and FMA3). A property of the machine, fixed at start.
var hasFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func gemvFMA(w, x, out *float32, rows, cols int)

// gemv sets out[r] to the inner product of row r of w (rows of len(x)) and x.
func gemv(w, x, out []float32) {
	cols := len(x)
	if hasFMA && cols%8 == 0 && len(out) > 0 {
		_ = w[len(out)*cols-1]
		gemvFMA(&w[0], &x[0], &out[0], len(out), cols)
		return
	}
	gemvGo(w, x, out)
}

//go:noescape
func gemm4FMA(w, x, out *float32, rows, cols int)

// gemm4 computes four products at once: out[t*rows+r] is the inner product of row r of w and
// x[t*cols:(t+1)*cols], for t < 4, where rows is len(out)/4 and cols len(x)/4.
func gemm4(w, x, out []float32) {
	rows, cols := len(out)/4, len(x)/4
	if hasFMA && cols%8 == 0 && rows > 0 {
		_, _, _ = w[rows*cols-1], x[4*cols-1], out[4*rows-1]
		gemm4FMA(&w[0], &x[0], &out[0], rows, cols)
		return
	}
	gemm4Go(w, x, out)
}
