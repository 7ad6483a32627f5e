#include "textflag.h"

// func gemvFMA(w, x, out *float32, rows, cols int)
//
// out[r] = w[r*cols : (r+1)*cols] · x[:cols] for r < rows, in one call (cols a multiple of 8):
// per row four 8-wide accumulators over 32 columns at a time, then 8 at a time, then a
// horizontal sum.
TEXT ·gemvFMA(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DX
	MOVQ out+16(FP), R8
	MOVQ rows+24(FP), R9
	MOVQ cols+32(FP), R10

row:
	CMPQ R9, $0
	JE   gdone
	MOVQ DX, DI
	MOVQ R10, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

g32:
	CMPQ CX, $32
	JL   g8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  g32

g8:
	CMPQ CX, $8
	JL   greduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  g8

greduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	MOVSS X0, (R8)
	ADDQ $4, R8
	DECQ R9
	JMP  row

gdone:
	VZEROUPPER
	RET

// func gemm4FMA(w, x, out *float32, rows, cols int)
//
// Four products at once: out[t*rows+r] = w[r*cols:(r+1)*cols] · x[t*cols:(t+1)*cols] for t < 4
// and r < rows (cols a multiple of 8). Each row of w is read once for the four.
TEXT ·gemm4FMA(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DX
	MOVQ out+16(FP), R8
	MOVQ rows+24(FP), R9
	MOVQ cols+32(FP), R10
	MOVQ R10, R11
	SHLQ $2, R11           // bytes per column vector
	MOVQ R9, R12
	SHLQ $2, R12           // bytes per output column

m4row:
	CMPQ R9, $0
	JE   m4done
	MOVQ DX, DI            // x0
	LEAQ (DI)(R11*1), AX   // x1
	LEAQ (AX)(R11*1), BX   // x2
	LEAQ (BX)(R11*1), R13  // x3
	MOVQ R10, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

m4k:
	CMPQ CX, $0
	JE   m4store
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS (AX), Y4, Y1
	VFMADD231PS (BX), Y4, Y2
	VFMADD231PS (R13), Y4, Y3
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, AX
	ADDQ $32, BX
	ADDQ $32, R13
	SUBQ $8, CX
	JMP  m4k

m4store:
	// horizontal sums of Y0..Y3 into out[0], out[rows], out[2 rows], out[3 rows]
	VEXTRACTF128 $1, Y0, X4
	VADDPS X4, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VEXTRACTF128 $1, Y1, X4
	VADDPS X4, X1, X1
	VHADDPS X1, X1, X1
	VHADDPS X1, X1, X1
	VEXTRACTF128 $1, Y2, X4
	VADDPS X4, X2, X2
	VHADDPS X2, X2, X2
	VHADDPS X2, X2, X2
	VEXTRACTF128 $1, Y3, X4
	VADDPS X4, X3, X3
	VHADDPS X3, X3, X3
	VHADDPS X3, X3, X3
	MOVQ R8, R14
	MOVSS X0, (R14)
	ADDQ R12, R14
	MOVSS X1, (R14)
	ADDQ R12, R14
	MOVSS X2, (R14)
	ADDQ R12, R14
	MOVSS X3, (R14)
	ADDQ $4, R8
	DECQ R9
	JMP  m4row

m4done:
	VZEROUPPER
	RET
