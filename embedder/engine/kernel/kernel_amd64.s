#include "textflag.h"

// func dot2x4AVX2(a0, a1, b0, b1, b2, b3 *float32, blocks int, out *[8]float32)
//
// out[r*4+c] = sum over blocks*8 floats of a_r[k] * b_c[k], for r in 0..1
// and c in 0..3. Eight independent FMA accumulators hide FMA latency; each
// loaded b vector is used twice and each a vector four times.
TEXT ·dot2x4AVX2(SB), NOSPLIT, $0-64
	MOVQ a0+0(FP), SI
	MOVQ a1+8(FP), DI
	MOVQ b0+16(FP), R8
	MOVQ b1+24(FP), R9
	MOVQ b2+32(FP), R10
	MOVQ b3+40(FP), R11
	MOVQ blocks+48(FP), CX
	MOVQ out+56(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ AX, AX
	TESTQ CX, CX
	JE reduce

loop:
	VMOVUPS (SI)(AX*1), Y8
	VMOVUPS (DI)(AX*1), Y9
	VMOVUPS (R8)(AX*1), Y10
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y4
	VMOVUPS (R9)(AX*1), Y11
	VFMADD231PS Y11, Y8, Y1
	VFMADD231PS Y11, Y9, Y5
	VMOVUPS (R10)(AX*1), Y12
	VFMADD231PS Y12, Y8, Y2
	VFMADD231PS Y12, Y9, Y6
	VMOVUPS (R11)(AX*1), Y13
	VFMADD231PS Y13, Y8, Y3
	VFMADD231PS Y13, Y9, Y7
	ADDQ $32, AX
	DECQ CX
	JNE loop

reduce:
	// Horizontal sums: fold pairs of accumulators with VHADDPS so that the
	// eight totals end up in one vector in order 0..7.
	VHADDPS Y1, Y0, Y0   // [a0b0 pairs, a0b1 pairs] per 128-bit lane
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0   // lane-wise: [s0 s1 s2 s3] partials per lane
	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y6, Y4, Y4
	VEXTRACTF128 $1, Y0, X8
	VADDPS X8, X0, X0
	VEXTRACTF128 $1, Y4, X9
	VADDPS X9, X4, X4
	VMOVUPS X0, 0(DX)
	VMOVUPS X4, 16(DX)
	VZEROUPPER
	RET
