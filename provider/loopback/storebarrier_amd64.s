#include "textflag.h"

// func storeBarrier()
TEXT ·storeBarrier(SB), NOSPLIT, $0-0
	SFENCE
	RET
