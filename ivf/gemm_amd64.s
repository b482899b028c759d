//go:build amd64 && !purego

#include "textflag.h"

// Adds float64(float32 accumulators za|zb) to the 32 float64 at (R9) and
// advances R9 by one output row (BX bytes).
#define ROWOUT(za, ya, zb, yb) \
	VCVTPS2PD     ya, Z26; \
	VADDPD        (R9), Z26, Z26; \
	VMOVUPD       Z26, (R9); \
	VEXTRACTF64X4 $1, za, Y27; \
	VCVTPS2PD     Y27, Z27; \
	VADDPD        64(R9), Z27, Z27; \
	VMOVUPD       Z27, 64(R9); \
	VCVTPS2PD     yb, Z28; \
	VADDPD        128(R9), Z28, Z28; \
	VMOVUPD       Z28, 128(R9); \
	VEXTRACTF64X4 $1, zb, Y29; \
	VCVTPS2PD     Y29, Z29; \
	VADDPD        192(R9), Z29, Z29; \
	VMOVUPD       Z29, 192(R9); \
	ADDQ          BX, R9

// func gemmTileAVX512(a, b *float32, d int, c *float64, ldc int)
//
// 8 packed rows (a: d×8) × 32 packed centroids (b: d×32). For every block
// of 128 dimensions: float32 FMA accumulation in order of t, then each
// accumulator is converted to float64 and added to c[r*ldc+j].
TEXT ·gemmTileAVX512(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ d+16(FP), CX
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), BX
	SHLQ $3, BX

block:
	MOVQ    $128, R8
	CMPQ    CX, R8
	CMOVQLT CX, R8
	SUBQ    R8, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

inner:
	VMOVUPS (DI), Z16
	VMOVUPS 64(DI), Z17
	VBROADCASTSS 0(SI), Z18
	VFMADD231PS Z16, Z18, Z0
	VFMADD231PS Z17, Z18, Z1
	VBROADCASTSS 4(SI), Z19
	VFMADD231PS Z16, Z19, Z2
	VFMADD231PS Z17, Z19, Z3
	VBROADCASTSS 8(SI), Z20
	VFMADD231PS Z16, Z20, Z4
	VFMADD231PS Z17, Z20, Z5
	VBROADCASTSS 12(SI), Z21
	VFMADD231PS Z16, Z21, Z6
	VFMADD231PS Z17, Z21, Z7
	VBROADCASTSS 16(SI), Z22
	VFMADD231PS Z16, Z22, Z8
	VFMADD231PS Z17, Z22, Z9
	VBROADCASTSS 20(SI), Z23
	VFMADD231PS Z16, Z23, Z10
	VFMADD231PS Z17, Z23, Z11
	VBROADCASTSS 24(SI), Z24
	VFMADD231PS Z16, Z24, Z12
	VFMADD231PS Z17, Z24, Z13
	VBROADCASTSS 28(SI), Z25
	VFMADD231PS Z16, Z25, Z14
	VFMADD231PS Z17, Z25, Z15
	ADDQ $32, SI
	ADDQ $128, DI
	DECQ R8
	JNZ  inner

	MOVQ DX, R9
	ROWOUT(Z0, Y0, Z1, Y1)
	ROWOUT(Z2, Y2, Z3, Y3)
	ROWOUT(Z4, Y4, Z5, Y5)
	ROWOUT(Z6, Y6, Z7, Y7)
	ROWOUT(Z8, Y8, Z9, Y9)
	ROWOUT(Z10, Y10, Z11, Y11)
	ROWOUT(Z12, Y12, Z13, Y13)
	ROWOUT(Z14, Y14, Z15, Y15)
	TESTQ CX, CX
	JNZ   block
	VZEROUPPER
	RET

// func addWidenAVX512(dst *float64, src *float32, n int)
//
// dst[i] += float64(src[i]) for i < n; n is a positive multiple of 16.
TEXT ·addWidenAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

widen:
	VCVTPS2PD (SI), Z0
	VCVTPS2PD 32(SI), Z1
	VADDPD    (DI), Z0, Z0
	VADDPD    64(DI), Z1, Z1
	VMOVUPD   Z0, (DI)
	VMOVUPD   Z1, 64(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	SUBQ      $16, CX
	JNZ       widen
	VZEROUPPER
	RET

// func scanAVX512(dots, hi, lo, kt *float64, n int, xU float64, out *float64) float64
//
// For j < n (a positive multiple of 8), with e = xU·kt[j]:
// out[j] = (lo[j] − 2·dots[j]) − e, and the result is the minimum over j of
// (hi[j] − 2·dots[j]) + e. Every operation is one rounded float64 operation.
TEXT ·scanAVX512(SB), NOSPLIT, $0-64
	MOVQ         dots+0(FP), SI
	MOVQ         hi+8(FP), DI
	MOVQ         lo+16(FP), R8
	MOVQ         kt+24(FP), R9
	MOVQ         n+32(FP), CX
	VBROADCASTSD xU+40(FP), Z7
	MOVQ         out+48(FP), R10
	MOVQ         $0x7ff0000000000000, AX
	VPBROADCASTQ AX, Z4

scan:
	VMOVUPD (SI), Z0
	VADDPD  Z0, Z0, Z0
	VMULPD  (R9), Z7, Z1
	VMOVUPD (DI), Z2
	VSUBPD  Z0, Z2, Z2
	VADDPD  Z1, Z2, Z2
	VMINPD  Z2, Z4, Z4
	VMOVUPD (R8), Z3
	VSUBPD  Z0, Z3, Z3
	VSUBPD  Z1, Z3, Z3
	VMOVUPD Z3, (R10)
	ADDQ    $64, SI
	ADDQ    $64, DI
	ADDQ    $64, R8
	ADDQ    $64, R9
	ADDQ    $64, R10
	SUBQ    $8, CX
	JNZ     scan

	VEXTRACTF64X4 $1, Z4, Y5
	VMINPD        Y5, Y4, Y4
	VEXTRACTF128  $1, Y4, X5
	VMINPD        X5, X4, X4
	VPERMILPD     $1, X4, X5
	VMINPD        X5, X4, X4
	VZEROUPPER
	MOVSD         X4, ret+56(FP)
	RET

// func gemmTile16AVX512(a, b *float32, d int, c *float64, ldc int)
//
// gemmTileAVX512 for a half panel: 8 packed rows × 16 packed centroids
// (b: d×16), same order of operations.
TEXT ·gemmTile16AVX512(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ d+16(FP), CX
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), BX
	SHLQ $3, BX

block16:
	MOVQ    $128, R8
	CMPQ    CX, R8
	CMOVQLT CX, R8
	SUBQ    R8, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

inner16:
	VMOVUPS (DI), Z16
	VBROADCASTSS 0(SI), Z18
	VFMADD231PS Z16, Z18, Z0
	VBROADCASTSS 4(SI), Z19
	VFMADD231PS Z16, Z19, Z1
	VBROADCASTSS 8(SI), Z20
	VFMADD231PS Z16, Z20, Z2
	VBROADCASTSS 12(SI), Z21
	VFMADD231PS Z16, Z21, Z3
	VBROADCASTSS 16(SI), Z22
	VFMADD231PS Z16, Z22, Z4
	VBROADCASTSS 20(SI), Z23
	VFMADD231PS Z16, Z23, Z5
	VBROADCASTSS 24(SI), Z24
	VFMADD231PS Z16, Z24, Z6
	VBROADCASTSS 28(SI), Z25
	VFMADD231PS Z16, Z25, Z7
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ R8
	JNZ  inner16

	MOVQ DX, R9
	VCVTPS2PD     Y0, Z26
	VADDPD        (R9), Z26, Z26
	VMOVUPD       Z26, (R9)
	VEXTRACTF64X4 $1, Z0, Y27
	VCVTPS2PD     Y27, Z27
	VADDPD        64(R9), Z27, Z27
	VMOVUPD       Z27, 64(R9)
	ADDQ          BX, R9
	VCVTPS2PD     Y1, Z26
	VADDPD        (R9), Z26, Z26
	VMOVUPD       Z26, (R9)
	VEXTRACTF64X4 $1, Z1, Y27
	VCVTPS2PD     Y27, Z27
	VADDPD        64(R9), Z27, Z27
	VMOVUPD       Z27, 64(R9)
	ADDQ          BX, R9
	VCVTPS2PD     Y2, Z26
	VADDPD        (R9), Z26, Z26
	VMOVUPD       Z26, (R9)
	VEXTRACTF64X4 $1, Z2, Y27
	VCVTPS2PD     Y27, Z27
	VADDPD        64(R9), Z27, Z27
	VMOVUPD       Z27, 64(R9)
	ADDQ          BX, R9
	VCVTPS2PD     Y3, Z26
	VADDPD        (R9), Z26, Z26
	VMOVUPD       Z26, (R9)
	VEXTRACTF64X4 $1, Z3, Y27
	VCVTPS2PD     Y27, Z27
	VADDPD        64(R9), Z27, Z27
	VMOVUPD       Z27, 64(R9)
	ADDQ          BX, R9
	VCVTPS2PD     Y4, Z26
	VADDPD        (R9), Z26, Z26
	VMOVUPD       Z26, (R9)
	VEXTRACTF64X4 $1, Z4, Y27
	VCVTPS2PD     Y27, Z27
	VADDPD        64(R9), Z27, Z27
	VMOVUPD       Z27, 64(R9)
	ADDQ          BX, R9
	VCVTPS2PD     Y5, Z26
	VADDPD        (R9), Z26, Z26
	VMOVUPD       Z26, (R9)
	VEXTRACTF64X4 $1, Z5, Y27
	VCVTPS2PD     Y27, Z27
	VADDPD        64(R9), Z27, Z27
	VMOVUPD       Z27, 64(R9)
	ADDQ          BX, R9
	VCVTPS2PD     Y6, Z26
	VADDPD        (R9), Z26, Z26
	VMOVUPD       Z26, (R9)
	VEXTRACTF64X4 $1, Z6, Y27
	VCVTPS2PD     Y27, Z27
	VADDPD        64(R9), Z27, Z27
	VMOVUPD       Z27, 64(R9)
	ADDQ          BX, R9
	VCVTPS2PD     Y7, Z26
	VADDPD        (R9), Z26, Z26
	VMOVUPD       Z26, (R9)
	VEXTRACTF64X4 $1, Z7, Y27
	VCVTPS2PD     Y27, Z27
	VADDPD        64(R9), Z27, Z27
	VMOVUPD       Z27, 64(R9)
	ADDQ          BX, R9
	TESTQ CX, CX
	JNZ   block16
	VZEROUPPER
	RET
