//go:build !purego

#include "textflag.h"

// Two groups of a pair of blocks (DI and R10) into the accumulators
// Z0-Z7, then DI, R10, SI (hl) and CX (groups left) moved on.
#define PAIR_GROUPS2 \
	VMOVDQU32     (DI), Z8 \
	VMOVDQU32     (R10), Z9 \
	VMOVDQU32     64(DI), Z10 \
	VMOVDQU32     64(R10), Z11 \
	VPDPBUSD.BCST (SI), Z8, Z0 \
	VPDPBUSD.BCST 4(SI), Z8, Z1 \
	VPDPBUSD.BCST (SI), Z9, Z2 \
	VPDPBUSD.BCST 4(SI), Z9, Z3 \
	VPDPBUSD.BCST 8(SI), Z10, Z4 \
	VPDPBUSD.BCST 12(SI), Z10, Z5 \
	VPDPBUSD.BCST 8(SI), Z11, Z6 \
	VPDPBUSD.BCST 12(SI), Z11, Z7 \
	ADDQ          $16, SI \
	ADDQ          $128, DI \
	ADDQ          $128, R10 \
	SUBQ          $2, CX

// func dotU8BlockedVNNI(hl *int8, codes *byte, g4, nb int, s float32, out *float32, lim int, acc int)
//
// DotU8Blocked over nb ≥ 1 blocks of 16 rows of g4 groups of 4 codes
// (BlockU8's layout; hl is U8Query.hl). For each group the 16 rows' 4
// codes (one dword lane each, unsigned) are multiplied by the group's 4 h
// bytes and its 4 l bytes (signed, broadcast from hl) and summed into
// int32 lanes with VPDPBUSD (non-saturating; no sum can overflow, see
// U8BlockedMaxDim). Two blocks are done at once, each with separate
// accumulators for even and odd groups, so eight independent VPDPBUSD
// chains hide the instruction's latency. The pair loop prefetches the
// same bytes of the pair two blocks on while that pair ends within lim
// bytes of codes (none with lim 0; the caller's codes may go on past the
// nb blocks: in DotU8Blocked's layout above 256 dimensions, to the next
// chunk's blocks, read next), so that the next 4 KB pages are on their
// way before the loads reach them. A block's result is S·float32(256·Σh +
// Σl): the exact integer Σ_j qi_j·c_j rounded once to float32, then
// multiplied by S, as dotU8BlockedGeneric computes it; with acc ≠ 0 it is
// added to out's value (one float32 addition, VADDPS) instead of stored.
TEXT ·dotU8BlockedVNNI(SB), NOSPLIT, $0-64
	MOVQ         hl+0(FP), R9
	MOVQ         codes+8(FP), DI
	MOVQ         g4+16(FP), DX
	MOVQ         nb+24(FP), BX
	VBROADCASTSS s+32(FP), Z31
	MOVQ         out+40(FP), R8
	MOVQ         lim+48(FP), R13
	ADDQ         DI, R13 // the end of the codes that may be prefetched
	MOVQ         DX, R11
	SHLQ         $6, R11 // bytes per block
	LEAQ         (R11)(R11*1), R12 // two blocks

bl_pair:
	CMPQ    BX, $2
	JL      bl_single
	MOVQ    R9, SI
	MOVQ    DX, CX
	LEAQ    (DI)(R11*1), R10
	LEAQ    (R10)(R12*1), AX // the end of the pair two blocks on
	ADDQ    R11, AX
	XORQ    R14, R14         // the prefetch distance: 0 (none) past lim
	CMPQ    AX, R13
	CMOVQLS R12, R14
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	TESTQ  R14, R14
	JZ     bl_pair2np

bl_pair2:
	CMPQ       CX, $2
	JL         bl_pair1
	PREFETCHT0 (DI)(R14*1)
	PREFETCHT0 (R10)(R14*1)
	PAIR_GROUPS2
	JMP        bl_pair2

bl_pair2np: // bl_pair2 without the prefetches
	CMPQ CX, $2
	JL   bl_pair1
	PAIR_GROUPS2
	JMP  bl_pair2np

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
	CMPQ      acc+56(FP), $0
	JE        bl_pairstore
	VADDPS    (R8), Z0, Z0
	VADDPS    64(R8), Z2, Z2

bl_pairstore:
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
	CMPQ      acc+56(FP), $0
	JE        bl_singlestore
	VADDPS    (R8), Z0, Z0

bl_singlestore:
	VMOVUPS   Z0, (R8)

bl_end:
	VZEROUPPER
	RET

// func absMaxF32AVX512(q *float32, n int) float32
//
// max_j |q_j| over n ≥ 1 finite values: 16 lanes of VMAXPS, the last
// n mod 16 values by a zero-masked load.
TEXT ·absMaxF32AVX512(SB), NOSPLIT, $0-20
	MOVQ         q+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	VPXORD       Z0, Z0, Z0

am_16:
	CMPQ    CX, $16
	JL      am_tail
	VANDPS  (SI), Z31, Z1
	VMAXPS  Z1, Z0, Z0
	ADDQ    $64, SI
	SUBQ    $16, CX
	JMP     am_16

am_tail:
	TESTQ      CX, CX
	JZ         am_reduce
	MOVL       $1, AX
	SHLL       CX, AX
	DECL       AX
	KMOVW      AX, K1
	VMOVUPS.Z  (SI), K1, Z1
	VANDPS     Z1, Z31, Z1
	VMAXPS     Z1, Z0, Z0

am_reduce:
	VEXTRACTF32X8 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VMOVHLPS      X0, X1, X1
	VMAXPS        X1, X0, X0
	VMOVSHDUP     X0, X1
	VMAXSS        X1, X0, X0
	VMOVSS        X0, ret+16(FP)
	VZEROUPPER
	RET

// func quantizeU8QueryAVX512(q *float32, n int, inv float64, hl *int8)
//
// U8Query.Set's loop for n ≥ 1 values, 16 at a time (the last n mod 16 by
// a zero-masked load, whose lanes give 0): x = float64(q_j)·inv,
// qi = trunc(x + copysign(0.5, x)) clamped to ±32639, h = (qi+128)>>8,
// l = qi − 256·h, each narrowed to a byte, and the 16 h and 16 l bytes
// interleaved by 4 (h of dims 4g…4g+3, then their l): 32 bytes of hl per
// 16 values, ⌈n/16⌉·32 in all, as many as the Go loop's arithmetic gives.
TEXT ·quantizeU8QueryAVX512(SB), NOSPLIT, $0-32
	MOVQ         q+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD inv+16(FP), Z31
	MOVQ         hl+24(FP), DI
	MOVQ         $0x8000000000000000, AX
	VPBROADCASTQ AX, Z30 // sign
	MOVQ         $0x3fe0000000000000, AX
	VPBROADCASTQ AX, Z29 // 0.5
	MOVL         $32639, AX
	VPBROADCASTD AX, Z28
	MOVL         $-32639, AX
	VPBROADCASTD AX, Z27
	MOVL         $128, AX
	VPBROADCASTD AX, Z26
	MOVL         $0xffff, AX
	KMOVW        AX, K1

qz_loop:
	TESTQ CX, CX
	JLE   qz_end
	CMPQ  CX, $16
	JGE   qz_load
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1

qz_load:
	VMOVUPS.Z     (SI), K1, Z0
	VCVTPS2PD     Y0, Z1
	VEXTRACTF32X8 $1, Z0, Y2
	VCVTPS2PD     Y2, Z2
	VMULPD        Z31, Z1, Z1
	VMULPD        Z31, Z2, Z2
	VANDPD        Z30, Z1, Z3
	VANDPD        Z30, Z2, Z4
	VORPD         Z29, Z3, Z3
	VORPD         Z29, Z4, Z4
	VADDPD        Z3, Z1, Z1
	VADDPD        Z4, Z2, Z2
	VCVTTPD2DQ    Z1, Y1
	VCVTTPD2DQ    Z2, Y2
	VINSERTI32X8  $1, Y2, Z1, Z1
	VPMINSD       Z28, Z1, Z1
	VPMAXSD       Z27, Z1, Z1
	VPADDD        Z26, Z1, Z4
	VPSRAD        $8, Z4, Z4 // h
	VPSLLD        $8, Z4, Z5
	VPSUBD        Z5, Z1, Z5 // l
	VPMOVDB       Z4, X4
	VPMOVDB       Z5, X5
	VPUNPCKLDQ    X5, X4, X6
	VPUNPCKHDQ    X5, X4, X7
	VMOVDQU       X6, (DI)
	VMOVDQU       X7, 16(DI)
	ADDQ          $64, SI
	ADDQ          $32, DI
	SUBQ          $16, CX
	JMP           qz_loop

qz_end:
	VZEROUPPER
	RET

// func prefetchLines(p *byte, n int)
//
// PREFETCHT0 of every 64-byte line that bytes p[0:n] touch (n ≥ 1).
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), DI
	MOVQ n+8(FP), CX
	LEAQ -1(DI)(CX*1), CX // the last byte
	ANDQ $-64, CX         // its line
	ANDQ $-64, DI         // the first byte's

pf_line:
	PREFETCHT0 (DI)
	ADDQ       $64, DI
	CMPQ       DI, CX
	JLS        pf_line
	RET
