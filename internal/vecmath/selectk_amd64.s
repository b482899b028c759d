//go:build !purego

#include "textflag.h"

// One step of the ranks of the 16 values of Z20 among themselves: the
// lanes of Z20 above those of Z20 rotated by r counted in acc.
#define RANK1(r, acc) \
	VALIGND $r, Z20, Z20, Z2 \
	VCMPPS  $0x1e, Z2, Z20, K1 \
	VPADDD  Z31, acc, K1, acc

// One step of the ranks of the 32 values of Z20:Z21 among themselves:
// each register compared with both rotated by r (Z10, Z12: Z20's counts;
// Z11, Z13: Z21's).
#define RANK2(r) \
	VALIGND $r, Z20, Z20, Z2 \
	VALIGND $r, Z21, Z21, Z3 \
	VCMPPS  $0x1e, Z2, Z20, K1 \
	VCMPPS  $0x1e, Z3, Z20, K2 \
	VCMPPS  $0x1e, Z3, Z21, K3 \
	VCMPPS  $0x1e, Z2, Z21, K6 \
	VPADDD  Z31, Z10, K1, Z10 \
	VPADDD  Z31, Z12, K2, Z12 \
	VPADDD  Z31, Z11, K3, Z11 \
	VPADDD  Z31, Z13, K6, Z13

// func smallestAVX512(d *float32, n, k int, vals *float32, idx, rank *int32) (m int, kth float32)
//
// SmallestK in one pass over d for the column minima and one for the
// candidates:
//
//  1. Column minima: Z20 (and Z21 when k > 16) the lane-wise minima of
//     d's blocks of 16 (rows of 32), the tail merged into +Inf; K7
//     gathers the NaN lanes (unordered compare).
//  2. T, the k-th smallest of the column minima, by the register rank
//     block at sel_regrank.
//  3. The values ≤ T and their positions compacted into vals and idx
//     (VCOMPRESSPS/VPCOMPRESSD in a register, then a full 64-byte store:
//     the memory form is slow on some CPUs), at most 64 of them; the first
//     32 values also gathered in Z20:Z21 (+Inf past them), each block's
//     rotated into place (VPERMPS) and merged under a mask of its lanes.
//  4. Their ranks and the k-th smallest: up to 32 by the register rank
//     block again, 33 to 64 from vals by the memory rank block at sel_rank
//     (a register copy of 64 would cost more than it saves: rare).
//
// The register rank block (R11 = m ≤ 32 values in Z20, Z21): the ranks
// by rotations (RANK1, RANK2: no reload of values just stored, which
// would wait for the stores), in Z10 (and Z11). The memory rank block
// (R11 = m ≤ 64 values at vals, +Inf written at vals[m]; Z20–Z23): each
// value broadcast and compared with the blocks (greater than, ordered),
// the lanes above it counted in Z10–Z13. Both then take the k-th smallest
// as the largest valid value ranked below k (K4, K5, K6, K3: the m valid
// lanes by block), left in every lane of Z5; R12 says which step follows.
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
	VMOVDQU32    selLanes<>(SB), Z25
	VMOVAPS      Z30, Z20
	VMOVAPS      Z30, Z21
	KXORW        K7, K7, K7
	MOVQ         SI, R9
	MOVQ         BX, CX
	CMPQ         DX, $16
	JG           sel_c32

sel_c16:
	CMPQ    CX, $16
	JL      sel_c16_tail
	VMOVUPS (R9), Z2
	VMINPS  Z2, Z20, Z20
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
	VMINPS  Z2, Z20, Z20
	VCMPPS  $3, Z2, Z2, K1
	KORW    K1, K7, K7

sel_c16_done:
	KORTESTW K7, K7
	JNZ      sel_nan
	MOVQ     $16, R11
	XORQ     R12, R12
	JMP      sel_regrank

sel_c32:
	CMPQ    CX, $32
	JL      sel_c32_tail
	VMOVUPS (R9), Z2
	VMOVUPS 64(R9), Z3
	VMINPS  Z2, Z20, Z20
	VMINPS  Z3, Z21, Z21
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
	VMINPS  Z2, Z20, Z20
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
	VMINPS  Z3, Z21, Z21
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
	VMINPS  Z2, Z20, Z20
	VCMPPS  $3, Z2, Z2, K1
	KORW    K1, K7, K7

sel_c32_done:
	KORTESTW K7, K7
	JNZ      sel_nan
	MOVQ     $32, R11
	XORQ     R12, R12
	JMP      sel_regrank

sel_compress:
	// Z5 = T in every lane; Z28 = the positions of the block's lanes
	VMOVDQA32    Z25, Z28
	MOVL         $16, AX
	VPBROADCASTD AX, Z27
	VMOVAPS      Z30, Z20
	VMOVAPS      Z30, Z21
	XORQ         R11, R11
	MOVQ         SI, R9
	MOVQ         BX, CX

sel_cmp:
	TESTQ   CX, CX
	JLE     sel_cmp_done
	CMPQ    R11, $64
	JA      sel_over
	CMPQ    CX, $16
	JL      sel_cmp_tail
	VMOVUPS (R9), Z2
	VCMPPS  $2, Z5, Z2, K1 // ≤ T (LE_OS)
	JMP     sel_cmp_block

sel_cmp_tail:
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K2
	VMOVUPS.Z (R9), K2, Z2
	VCMPPS    $2, Z5, Z2, K2, K1

sel_cmp_block:
	VCOMPRESSPS  Z2, K1, Z3
	VMOVUPS      Z3, (DI)(R11*4)
	VPCOMPRESSD  Z28, K1, Z4
	VMOVDQU32    Z4, (R8)(R11*4)
	KMOVW        K1, AX
	POPCNTL      AX, AX
	CMPQ         R11, $32
	JAE          sel_cmp_next
	// Z20:Z21 lanes a…a+p−1 (a = R11, p = AX) ← Z3 lanes 0…p−1
	VPBROADCASTD R11, Z7
	VPSUBD       Z7, Z25, Z8
	VPERMPS      Z3, Z8, Z9 // lane j: Z3[(j − a) mod 16]
	MOVL         $1, R13
	SHLXQ        AX, R13, R13
	DECQ         R13
	SHLXQ        R11, R13, R13
	KMOVQ        R13, K2
	KSHIFTRQ     $16, K2, K3
	VMOVAPS      Z9, K2, Z20
	VMOVAPS      Z9, K3, Z21

sel_cmp_next:
	ADDQ   AX, R11
	VPADDD Z27, Z28, Z28
	ADDQ   $64, R9
	SUBQ   $16, CX
	JMP    sel_cmp

sel_cmp_done:
	CMPQ R11, $64
	JA   sel_over
	CMPQ R11, DX
	JL   sel_over // cannot happen: T is at least the k-th smallest
	MOVQ $1, R12
	CMPQ R11, $32
	JA   sel_rank

sel_regrank:
	MOVQ     R11, CX
	MOVQ     $1, AX
	SHLQ     CX, AX
	DECQ     AX
	KMOVQ    AX, K4
	KSHIFTRQ $16, K4, K5
	VPXORD   Z10, Z10, Z10
	VPXORD   Z11, Z11, Z11
	VPXORD   Z12, Z12, Z12
	VPXORD   Z13, Z13, Z13
	CMPQ     R11, $16
	JA       sel_rr2
	RANK1(1, Z10)
	RANK1(2, Z12)
	RANK1(3, Z10)
	RANK1(4, Z12)
	RANK1(5, Z10)
	RANK1(6, Z12)
	RANK1(7, Z10)
	RANK1(8, Z12)
	RANK1(9, Z10)
	RANK1(10, Z12)
	RANK1(11, Z10)
	RANK1(12, Z12)
	RANK1(13, Z10)
	RANK1(14, Z12)
	RANK1(15, Z10)
	VPADDD   Z12, Z10, Z10
	JMP      sel_rrmax

sel_rr2:
	VCMPPS $0x1e, Z21, Z20, K1
	VCMPPS $0x1e, Z20, Z21, K2
	VPADDD Z31, Z10, K1, Z10
	VPADDD Z31, Z11, K2, Z11
	RANK2(1)
	RANK2(2)
	RANK2(3)
	RANK2(4)
	RANK2(5)
	RANK2(6)
	RANK2(7)
	RANK2(8)
	RANK2(9)
	RANK2(10)
	RANK2(11)
	RANK2(12)
	RANK2(13)
	RANK2(14)
	RANK2(15)
	VPADDD Z12, Z10, Z10
	VPADDD Z13, Z11, Z11

sel_rrmax:
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	KXORQ  K6, K6, K6
	KXORQ  K3, K3, K3
	JMP    sel_rmax

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
