#include "textflag.h"

// Vectorised activations for AVX2+FMA, eight float32 lanes at a time. The
// constants come from a Go array (see activations.go) so no DATA symbols
// are needed; approx.go has the same formulas in scalar form.

// func expAVX2(x *float32, blocks int, shift, scale float32, c *[16]float32, sum *[8]float32)
//
// x[i] = exp((x[i]-shift)*scale) for blocks*8 values, and sum[lane] = the
// lanes' totals. exp is Cephes' expf: the argument clamped to
// [-87.3, 88.3], x = n·ln2 + r (ln2 in two parts), e^r = 1 + r + r²·P(r)
// with P of degree 5, then 2^n built in the exponent bits.
TEXT ·expAVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ blocks+8(FP), CX
	VBROADCASTSS shift+16(FP), Y14
	VBROADCASTSS scale+20(FP), Y15
	MOVQ c+24(FP), DX
	MOVQ sum+32(FP), DI
	VXORPS Y13, Y13, Y13
	VBROADCASTSS 0(DX), Y12  // log2(e)
	VBROADCASTSS 4(DX), Y11  // ln2, high part
	VBROADCASTSS 8(DX), Y10  // ln2, low part
	VBROADCASTSS 36(DX), Y9  // lowest argument
	VBROADCASTSS 40(DX), Y8  // highest argument
	VBROADCASTSS 44(DX), Y7  // 1
	VBROADCASTSS 48(DX), Y6  // 127, the exponent bias
	TESTQ CX, CX
	JE expdone

exploop:
	VMOVUPS (SI), Y0
	VSUBPS Y14, Y0, Y0
	VMULPS Y15, Y0, Y0
	VMAXPS Y9, Y0, Y0
	VMINPS Y8, Y0, Y0
	VMULPS Y12, Y0, Y1
	VROUNDPS $0, Y1, Y1           // n, rounded to nearest
	VFNMADD231PS Y11, Y1, Y0      // r = x - n·ln2hi
	VFNMADD231PS Y10, Y1, Y0      //     - n·ln2lo
	VMULPS Y0, Y0, Y2             // r²
	VBROADCASTSS 12(DX), Y3
	VBROADCASTSS 16(DX), Y4
	VFMADD213PS Y4, Y0, Y3
	VBROADCASTSS 20(DX), Y4
	VFMADD213PS Y4, Y0, Y3
	VBROADCASTSS 24(DX), Y4
	VFMADD213PS Y4, Y0, Y3
	VBROADCASTSS 28(DX), Y4
	VFMADD213PS Y4, Y0, Y3
	VBROADCASTSS 32(DX), Y4
	VFMADD213PS Y4, Y0, Y3        // P(r)
	VFMADD213PS Y0, Y2, Y3        // r²·P(r) + r
	VADDPS Y7, Y3, Y3             // + 1
	VADDPS Y6, Y1, Y1             // n + 127
	VCVTPS2DQ Y1, Y1
	VPSLLD $23, Y1, Y1            // 2^n
	VMULPS Y1, Y3, Y3
	VMOVUPS Y3, (SI)
	VADDPS Y3, Y13, Y13
	ADDQ $32, SI
	DECQ CX
	JNE exploop

expdone:
	VMOVUPS Y13, (DI)
	VZEROUPPER
	RET

// func geluAVX2(x *float32, blocks int, c *[16]float32)
//
// x[i] = x[i]/2·(1 + erf(x[i]/√2)) for blocks*8 values, erf by Eigen's
// rational approximation (y clamped to [-4, 4], y·P(y²)/Q(y²)).
TEXT ·geluAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ c+16(FP), DX
	VBROADCASTSS 0(DX), Y15  // 1/√2
	VBROADCASTSS 4(DX), Y14  // 4
	VBROADCASTSS 8(DX), Y13  // -4
	VBROADCASTSS 60(DX), Y12 // 0.5
	TESTQ CX, CX
	JE geludone

geluloop:
	VMOVUPS (SI), Y0
	VMULPS Y15, Y0, Y1
	VMINPS Y14, Y1, Y1
	VMAXPS Y13, Y1, Y1            // y
	VMULPS Y1, Y1, Y2             // y²
	VBROADCASTSS 12(DX), Y3       // numerator, from y^12's coefficient down
	VBROADCASTSS 16(DX), Y4
	VFMADD213PS Y4, Y2, Y3
	VBROADCASTSS 20(DX), Y4
	VFMADD213PS Y4, Y2, Y3
	VBROADCASTSS 24(DX), Y4
	VFMADD213PS Y4, Y2, Y3
	VBROADCASTSS 28(DX), Y4
	VFMADD213PS Y4, Y2, Y3
	VBROADCASTSS 32(DX), Y4
	VFMADD213PS Y4, Y2, Y3
	VBROADCASTSS 36(DX), Y4
	VFMADD213PS Y4, Y2, Y3
	VMULPS Y1, Y3, Y3             // y·P(y²)
	VBROADCASTSS 40(DX), Y5       // denominator, from y^8's coefficient down
	VBROADCASTSS 44(DX), Y4
	VFMADD213PS Y4, Y2, Y5
	VBROADCASTSS 48(DX), Y4
	VFMADD213PS Y4, Y2, Y5
	VBROADCASTSS 52(DX), Y4
	VFMADD213PS Y4, Y2, Y5
	VBROADCASTSS 56(DX), Y4
	VFMADD213PS Y4, Y2, Y5
	VDIVPS Y5, Y3, Y3             // erf(y)
	VFMADD213PS Y12, Y12, Y3      // (1 + erf)/2
	VMULPS Y0, Y3, Y3
	VMOVUPS Y3, (SI)
	ADDQ $32, SI
	DECQ CX
	JNE geluloop

geludone:
	VZEROUPPER
	RET
