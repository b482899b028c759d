//go:build !purego

#include "textflag.h"

// func smallestAVX512(d *float32, n, k int, vals *float32, idx, rank *int32) (m int, kth float32)
//
// SmallestK in one pass over d for the column minima and one for the
// candidates:
//
//  1. Column minima: Z0 (and Z1 when k > 16) the lane-wise minima of d's
//     blocks of 16 (rows of 32), the tail merged into +Inf; K7 gathers the
//     NaN lanes (unordered compare).
//  2. T, the k-th smallest of the column minima (stored to vals), by the
//     rank block at sel_rank.
//  3. The values ≤ T and their positions compacted into vals and idx
//     (VCOMPRESSPS/VPCOMPRESSD in a register, then a full 64-byte store:
//     the memory form is slow on some CPUs), at most 64 of them.
//  4. Their ranks and the k-th smallest, by the rank block again.
//
// vals gets +Inf at vals[m] for the rank block (m ≤ 64: within its 80).
//
// The rank block (R11 = m values at vals, 1 ≤ m ≤ 64, in up to four blocks
// Z20–Z23 with +Inf past m): each value broadcast and compared with the
// blocks (greater than, ordered), the lanes above it counted in Z10–Z13;
// the k-th smallest is the largest value ranked below k (K4, K5, K6, K3:
// the m valid lanes by block), left in every lane of Z5. R12 says which
// step it returns to.
TEXT ·smallestAVX512(SB), NOSPLIT, $0-60
	MOVQ         d+0(FP), SI
	MOVQ         n+8(FP), BX
	MOVQ         k+16(FP), DX
	MOVQ         vals+24(FP), DI
	MOVQ         idx+32(FP), R8
	MOVQ         rank+40(FP), R10
	MOVL         $0x7f800000, AX
	VPBROADCASTD AX, Z30 // +Inf
	MOVL         $0xff800000, AX
	VPBROADCASTD AX, Z29 // −Inf
	MOVL         $1, AX
	VPBROADCASTD AX, Z31
	LEAQ         -1(DX), AX
	VPBROADCASTD AX, Z26 // k − 1
	VMOVAPS      Z30, Z0
	VMOVAPS      Z30, Z1
	KXORW        K7, K7, K7
	MOVQ         SI, R9
	MOVQ         BX, CX
	CMPQ         DX, $16
	JG           sel_c32

sel_c16:
	CMPQ    CX, $16
	JL      sel_c16_tail
	VMOVUPS (R9), Z2
	VMINPS  Z2, Z0, Z0
	VCMPPS  $3, Z2, Z2, K1
	KORW    K1, K7, K7
	ADDQ    $64, R9
	SUBQ    $16, CX
	JMP     sel_c16

sel_c16_tail:
	TESTQ   CX, CX
	JZ      sel_c16_done
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K2
	VMOVAPS Z30, Z2
	VMOVUPS (R9), K2, Z2
	VMINPS  Z2, Z0, Z0
	VCMPPS  $3, Z2, Z2, K1
	KORW    K1, K7, K7

sel_c16_done:
	KORTESTW K7, K7
	JNZ      sel_nan
	VMOVUPS  Z0, (DI)
	MOVQ     $16, R11
	XORQ     R12, R12
	JMP      sel_rank

sel_c32:
	CMPQ    CX, $32
	JL      sel_c32_tail
	VMOVUPS (R9), Z2
	VMOVUPS 64(R9), Z3
	VMINPS  Z2, Z0, Z0
	VMINPS  Z3, Z1, Z1
	VCMPPS  $3, Z3, Z2, K1
	KORW    K1, K7, K7
	ADDQ    $128, R9
	SUBQ    $32, CX
	JMP     sel_c32

sel_c32_tail:
	TESTQ   CX, CX
	JZ      sel_c32_done
	CMPQ    CX, $16
	JL      sel_c32_t0
	VMOVUPS (R9), Z2
	VMINPS  Z2, Z0, Z0
	VCMPPS  $3, Z2, Z2, K1
	KORW    K1, K7, K7
	ADDQ    $64, R9
	SUBQ    $16, CX
	JZ      sel_c32_done
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K2
	VMOVAPS Z30, Z3
	VMOVUPS (R9), K2, Z3
	VMINPS  Z3, Z1, Z1
	VCMPPS  $3, Z3, Z3, K1
	KORW    K1, K7, K7
	JMP     sel_c32_done

sel_c32_t0:
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K2
	VMOVAPS Z30, Z2
	VMOVUPS (R9), K2, Z2
	VMINPS  Z2, Z0, Z0
	VCMPPS  $3, Z2, Z2, K1
	KORW    K1, K7, K7

sel_c32_done:
	KORTESTW K7, K7
	JNZ      sel_nan
	VMOVUPS  Z0, (DI)
	VMOVUPS  Z1, 64(DI)
	MOVQ     $32, R11
	XORQ     R12, R12
	JMP      sel_rank

sel_compress:
	// Z5 = T in every lane; Z28 = the positions of the block's lanes
	VMOVDQU32    selLanes<>(SB), Z28
	MOVL         $16, AX
	VPBROADCASTD AX, Z27
	XORQ         R11, R11
	MOVQ         SI, R9
	MOVQ         BX, CX

sel_cmp:
	CMPQ        CX, $16
	JL          sel_cmp_tail
	CMPQ        R11, $64
	JA          sel_over
	VMOVUPS     (R9), Z2
	VCMPPS      $2, Z5, Z2, K1 // ≤ T (LE_OS)
	VCOMPRESSPS Z2, K1, Z3
	VMOVUPS     Z3, (DI)(R11*4)
	VPCOMPRESSD Z28, K1, Z4
	VMOVDQU32   Z4, (R8)(R11*4)
	KMOVW       K1, AX
	POPCNTL     AX, AX
	ADDQ        AX, R11
	VPADDD      Z27, Z28, Z28
	ADDQ        $64, R9
	SUBQ        $16, CX
	JMP         sel_cmp

sel_cmp_tail:
	TESTQ       CX, CX
	JZ          sel_cmp_done
	CMPQ        R11, $64
	JA          sel_over
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K2
	VMOVUPS.Z   (R9), K2, Z2
	VCMPPS      $2, Z5, Z2, K2, K1
	VCOMPRESSPS Z2, K1, Z3
	VMOVUPS     Z3, (DI)(R11*4)
	VPCOMPRESSD Z28, K1, Z4
	VMOVDQU32   Z4, (R8)(R11*4)
	KMOVW       K1, AX
	POPCNTL     AX, AX
	ADDQ        AX, R11

sel_cmp_done:
	CMPQ R11, $64
	JA   sel_over
	CMPQ R11, DX
	JL   sel_over // cannot happen: T is at least the k-th smallest
	MOVQ $1, R12
	JMP  sel_rank

sel_final:
	VMOVDQU32 Z10, (R10)
	VMOVDQU32 Z11, 64(R10)
	VMOVDQU32 Z12, 128(R10)
	VMOVDQU32 Z13, 192(R10)
	MOVQ      R11, m+48(FP)
	VMOVSS    X5, kth+56(FP)
	VZEROUPPER
	RET

sel_nan:
	MOVQ $-1, m+48(FP)
	VZEROUPPER
	RET

sel_over:
	MOVQ $-2, m+48(FP)
	VZEROUPPER
	RET

sel_rank:
	MOVL     $0x7f800000, (DI)(R11*4) // past m: +Inf (sel_r1 reads pairs)
	MOVQ     $-1, AX
	CMPQ     R11, $64
	JAE      sel_rmask
	MOVQ     R11, CX
	MOVQ     $1, AX
	SHLQ     CX, AX
	DECQ     AX

sel_rmask:
	KMOVQ    AX, K4
	KSHIFTRQ $16, K4, K5
	KSHIFTRQ $32, K4, K6
	KSHIFTRQ $48, K4, K3
	VMOVAPS  Z30, Z20
	VMOVUPS  (DI), K4, Z20
	VMOVAPS  Z30, Z21
	VMOVUPS  64(DI), K5, Z21
	VMOVAPS  Z30, Z22
	VMOVUPS  128(DI), K6, Z22
	VMOVAPS  Z30, Z23
	VMOVUPS  192(DI), K3, Z23
	VPXORD   Z10, Z10, Z10
	VPXORD   Z11, Z11, Z11
	VPXORD   Z12, Z12, Z12
	VPXORD   Z13, Z13, Z13
	MOVQ     DI, R9
	MOVQ     R11, CX
	CMPQ     R11, $16
	JLE      sel_r1
	CMPQ     R11, $32
	JLE      sel_r2

sel_r4:
	VBROADCASTSS (R9), Z3
	VCMPPS       $0x1e, Z3, Z20, K1 // block > value (GT_OQ)
	VCMPPS       $0x1e, Z3, Z21, K2
	VPADDD       Z31, Z10, K1, Z10
	VPADDD       Z31, Z11, K2, Z11
	VCMPPS       $0x1e, Z3, Z22, K1
	VCMPPS       $0x1e, Z3, Z23, K2
	VPADDD       Z31, Z12, K1, Z12
	VPADDD       Z31, Z13, K2, Z13
	ADDQ         $4, R9
	DECQ         CX
	JNZ          sel_r4
	JMP          sel_rmax

sel_r2:
	VBROADCASTSS (R9), Z3
	VCMPPS       $0x1e, Z3, Z20, K1
	VCMPPS       $0x1e, Z3, Z21, K2
	VPADDD       Z31, Z10, K1, Z10
	VPADDD       Z31, Z11, K2, Z11
	ADDQ         $4, R9
	DECQ         CX
	JNZ          sel_r2
	JMP          sel_rmax

sel_r1:
	VBROADCASTSS (R9), Z3
	VBROADCASTSS 4(R9), Z4
	VCMPPS       $0x1e, Z3, Z20, K1
	VCMPPS       $0x1e, Z4, Z20, K2
	VPADDD       Z31, Z10, K1, Z10
	VPADDD       Z31, Z11, K2, Z11
	ADDQ         $8, R9
	SUBQ         $2, CX
	JG           sel_r1
	// odd m: the last step counted the +Inf past m, never below

sel_r1_sum:
	VPADDD Z11, Z10, Z10
	VPXORD Z11, Z11, Z11

sel_rmax:
	// the largest of the valid values ranked below k
	VPCMPD     $2, Z26, Z10, K4, K1 // rank ≤ k − 1
	VPCMPD     $2, Z26, Z11, K5, K2
	VMOVAPS    Z29, Z5
	VMOVAPS    Z29, Z6
	VMOVAPS    Z20, K1, Z5
	VMOVAPS    Z21, K2, Z6
	VPCMPD     $2, Z26, Z12, K6, K1
	VPCMPD     $2, Z26, Z13, K3, K2
	VMAXPS     Z22, Z5, K1, Z5
	VMAXPS     Z23, Z6, K2, Z6
	VMAXPS     Z6, Z5, Z5
	VSHUFF32X4 $0x4e, Z5, Z5, Z6
	VMAXPS     Z6, Z5, Z5
	VSHUFF32X4 $0xb1, Z5, Z5, Z6
	VMAXPS     Z6, Z5, Z5
	VPERMILPS  $0x4e, Z5, Z6
	VMAXPS     Z6, Z5, Z5
	VPERMILPS  $0xb1, Z5, Z6
	VMAXPS     Z6, Z5, Z5
	TESTQ      R12, R12
	JNZ        sel_final
	JMP        sel_compress

DATA selLanes<>+0(SB)/8, $0x0000000100000000
DATA selLanes<>+8(SB)/8, $0x0000000300000002
DATA selLanes<>+16(SB)/8, $0x0000000500000004
DATA selLanes<>+24(SB)/8, $0x0000000700000006
DATA selLanes<>+32(SB)/8, $0x0000000900000008
DATA selLanes<>+40(SB)/8, $0x0000000b0000000a
DATA selLanes<>+48(SB)/8, $0x0000000d0000000c
DATA selLanes<>+56(SB)/8, $0x0000000f0000000e
GLOBL selLanes<>(SB), RODATA|NOPTR, $64
