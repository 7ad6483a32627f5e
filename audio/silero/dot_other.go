//go:build !amd64

package silero

// gemv sets out[r] to the inner product of row r of w (rows of len(x)) and x.
func gemv(w, x, out []float32) { gemvGo(w, x, out) }

// gemm4 computes four products at once (see the amd64 version).
func gemm4(w, x, out []float32) { gemm4Go(w, x, out) }
