//go:build !purego

#include "textflag.h"

// func dotU8BlockedVNNI(hl *int8, codes *byte, g4, nb int, s float32, out *float32)
//
// DotU8Blocked over nb ≥ 1 blocks of 16 rows of g4 groups of 4 codes
// (BlockU8's layout; hl is U8Query.hl). For each group the 16 rows' 4
// codes (one dword lane each, unsigned) are multiplied by the group's 4 h
// bytes and its 4 l bytes (signed, broadcast from hl) and summed into
// int32 lanes with VPDPBUSD (non-saturating; no sum can overflow, see
// U8BlockedMaxDim). Two blocks are done at once, each with separate
// accumulators for even and odd groups, so eight independent VPDPBUSD
// chains hide the instruction's latency. A block's result is
// S·float32(256·Σh + Σl): the exact integer Σ_j qi_j·c_j rounded once to
// float32, then multiplied by S, as dotU8BlockedGeneric computes it.
TEXT ·dotU8BlockedVNNI(SB), NOSPLIT, $0-48
	MOVQ         hl+0(FP), R9
	MOVQ         codes+8(FP), DI
	MOVQ         g4+16(FP), DX
	MOVQ         nb+24(FP), BX
	VBROADCASTSS s+32(FP), Z31
	MOVQ         out+40(FP), R8
	MOVQ         DX, R11
	SHLQ         $6, R11 // bytes per block

bl_pair:
	CMPQ   BX, $2
	JL     bl_single
	MOVQ   R9, SI
	MOVQ   DX, CX
	LEAQ   (DI)(R11*1), R10
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

bl_pair2:
	CMPQ          CX, $2
	JL            bl_pair1
	VMOVDQU32     (DI), Z8
	VMOVDQU32     (R10), Z9
	VMOVDQU32     64(DI), Z10
	VMOVDQU32     64(R10), Z11
	VPDPBUSD.BCST (SI), Z8, Z0
	VPDPBUSD.BCST 4(SI), Z8, Z1
	VPDPBUSD.BCST (SI), Z9, Z2
	VPDPBUSD.BCST 4(SI), Z9, Z3
	VPDPBUSD.BCST 8(SI), Z10, Z4
	VPDPBUSD.BCST 12(SI), Z10, Z5
	VPDPBUSD.BCST 8(SI), Z11, Z6
	VPDPBUSD.BCST 12(SI), Z11, Z7
	ADDQ          $16, SI
	ADDQ          $128, DI
	ADDQ          $128, R10
	SUBQ          $2, CX
	JMP           bl_pair2

bl_pair1:
	TESTQ         CX, CX
	JZ            bl_pairsum
	VMOVDQU32     (DI), Z8
	VMOVDQU32     (R10), Z9
	VPDPBUSD.BCST (SI), Z8, Z0
	VPDPBUSD.BCST 4(SI), Z8, Z1
	VPDPBUSD.BCST (SI), Z9, Z2
	VPDPBUSD.BCST 4(SI), Z9, Z3
	ADDQ          $64, R10

bl_pairsum:
	VPADDD    Z4, Z0, Z0
	VPADDD    Z5, Z1, Z1
	VPADDD    Z6, Z2, Z2
	VPADDD    Z7, Z3, Z3
	VPSLLD    $8, Z0, Z0
	VPSLLD    $8, Z2, Z2
	VPADDD    Z1, Z0, Z0
	VPADDD    Z3, Z2, Z2
	VCVTDQ2PS Z0, Z0
	VCVTDQ2PS Z2, Z2
	VMULPS    Z31, Z0, Z0
	VMULPS    Z31, Z2, Z2
	VMOVUPS   Z0, (R8)
	VMOVUPS   Z2, 64(R8)
	ADDQ      $128, R8
	MOVQ      R10, DI // past the second block
	SUBQ      $2, BX
	JMP       bl_pair

bl_single:
	TESTQ  BX, BX
	JZ     bl_end
	MOVQ   R9, SI
	MOVQ   DX, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5

bl_single2:
	CMPQ          CX, $2
	JL            bl_single1
	VMOVDQU32     (DI), Z8
	VMOVDQU32     64(DI), Z10
	VPDPBUSD.BCST (SI), Z8, Z0
	VPDPBUSD.BCST 4(SI), Z8, Z1
	VPDPBUSD.BCST 8(SI), Z10, Z4
	VPDPBUSD.BCST 12(SI), Z10, Z5
	ADDQ          $16, SI
	ADDQ          $128, DI
	SUBQ          $2, CX
	JMP           bl_single2

bl_single1:
	TESTQ         CX, CX
	JZ            bl_singlesum
	VMOVDQU32     (DI), Z8
	VPDPBUSD.BCST (SI), Z8, Z0
	VPDPBUSD.BCST 4(SI), Z8, Z1

bl_singlesum:
	VPADDD    Z4, Z0, Z0
	VPADDD    Z5, Z1, Z1
	VPSLLD    $8, Z0, Z0
	VPADDD    Z1, Z0, Z0
	VCVTDQ2PS Z0, Z0
	VMULPS    Z31, Z0, Z0
	VMOVUPS   Z0, (R8)

bl_end:
	VZEROUPPER
	RET
