//go:build !purego

#include "textflag.h"

// Each kernel fills `words` words of dst from 64·words int32 values of xs:
// bit j of word w is the test on xs[64w+j]. The values are XORed with bias
// first (0x80000000 turns an unsigned compare into a signed one; the
// caller biases lit too). VPCMPGTD/VPCMPEQD compare 8 values at once and
// VMOVMSKPS takes their 8 sign bits.

// func ltInt32AVX2(dst *uint64, xs *int32, words int, lit, bias int32)
TEXT ·ltInt32AVX2(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         xs+8(FP), SI
	MOVQ         words+16(FP), CX
	MOVL         lit+24(FP), AX
	MOVL         bias+28(FP), BX
	VMOVD        AX, X0
	VMOVD        BX, X1
	VPBROADCASTD X0, Y0
	VPBROADCASTD X1, Y1
	TESTQ        CX, CX
	JZ           ltInt32AVX2_done

ltInt32AVX2_loop:
	XORQ     R8, R8
	VPXOR    0(SI), Y1, Y2
	VPCMPGTD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	ORQ      R9, R8
	VPXOR    32(SI), Y1, Y2
	VPCMPGTD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $8, R9
	ORQ      R9, R8
	VPXOR    64(SI), Y1, Y2
	VPCMPGTD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $16, R9
	ORQ      R9, R8
	VPXOR    96(SI), Y1, Y2
	VPCMPGTD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $24, R9
	ORQ      R9, R8
	VPXOR    128(SI), Y1, Y2
	VPCMPGTD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $32, R9
	ORQ      R9, R8
	VPXOR    160(SI), Y1, Y2
	VPCMPGTD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $40, R9
	ORQ      R9, R8
	VPXOR    192(SI), Y1, Y2
	VPCMPGTD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $48, R9
	ORQ      R9, R8
	VPXOR    224(SI), Y1, Y2
	VPCMPGTD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $56, R9
	ORQ      R9, R8
	MOVQ     R8, 0(DI)
	ADDQ     $256, SI
	ADDQ     $8, DI
	DECQ     CX
	JNZ      ltInt32AVX2_loop

ltInt32AVX2_done:
	VZEROUPPER
	RET

// func eqInt32AVX2(dst *uint64, xs *int32, words int, lit, bias int32)
TEXT ·eqInt32AVX2(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         xs+8(FP), SI
	MOVQ         words+16(FP), CX
	MOVL         lit+24(FP), AX
	MOVL         bias+28(FP), BX
	VMOVD        AX, X0
	VMOVD        BX, X1
	VPBROADCASTD X0, Y0
	VPBROADCASTD X1, Y1
	TESTQ        CX, CX
	JZ           eqInt32AVX2_done

eqInt32AVX2_loop:
	XORQ     R8, R8
	VPXOR    0(SI), Y1, Y2
	VPCMPEQD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	ORQ      R9, R8
	VPXOR    32(SI), Y1, Y2
	VPCMPEQD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $8, R9
	ORQ      R9, R8
	VPXOR    64(SI), Y1, Y2
	VPCMPEQD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $16, R9
	ORQ      R9, R8
	VPXOR    96(SI), Y1, Y2
	VPCMPEQD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $24, R9
	ORQ      R9, R8
	VPXOR    128(SI), Y1, Y2
	VPCMPEQD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $32, R9
	ORQ      R9, R8
	VPXOR    160(SI), Y1, Y2
	VPCMPEQD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $40, R9
	ORQ      R9, R8
	VPXOR    192(SI), Y1, Y2
	VPCMPEQD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $48, R9
	ORQ      R9, R8
	VPXOR    224(SI), Y1, Y2
	VPCMPEQD Y2, Y0, Y2
	VMOVMSKPS Y2, R9
	SHLQ     $56, R9
	ORQ      R9, R8
	MOVQ     R8, 0(DI)
	ADDQ     $256, SI
	ADDQ     $8, DI
	DECQ     CX
	JNZ      eqInt32AVX2_loop

eqInt32AVX2_done:
	VZEROUPPER
	RET
