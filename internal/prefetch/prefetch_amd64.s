#include "textflag.h"

// func Read(p unsafe.Pointer)
TEXT ·Read(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET

// func Write(p unsafe.Pointer)
TEXT ·Write(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	// PREFETCHW (AX), which the Go assembler does not know by name.
	BYTE $0x0f; BYTE $0x0d; BYTE $0x08
	RET
