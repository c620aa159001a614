/*
 * bcryptprimitives.dll for Wine 8, which lacks it: Go 1.22+ binaries import
 * bcryptprimitives.dll!ProcessPrng for their random numbers and die at
 * start-up without it ("fatal error: bcryptprimitives.dll not found").
 * ProcessPrng fills the buffer from advapi32's RtlGenRandom
 * (SystemFunction036), which Wine implements. Built by setup.sh with
 * Debian's gcc-mingw-w64-x86-64-win32; used for tests under Wine only.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
