#include "textflag.h"

// func StoreBarrier()
TEXT ·StoreBarrier(SB), NOSPLIT, $0-0
	SFENCE
	RET
