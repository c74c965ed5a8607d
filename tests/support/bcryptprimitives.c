/* Stand-in for Windows' bcryptprimitives.dll, which Wine 8 (Debian 12) lacks, so that
 * tests/tests/release_binaries.rs can run the Windows binary under Wine. Rust's standard library
 * (a raw-dylib import in its Windows bindings) and the getrandom crate draw random numbers with
 * ProcessPrng from bcryptprimitives.dll on Windows 10 and later; Microsoft documents it as
 * `BOOL ProcessPrng(PBYTE pbData, SIZE_T cbData)`, always returning TRUE. This one fills the
 * buffer from bcrypt.dll's system RNG, which Wine has. Never shipped: the release binary imports
 * the real DLL of Windows. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    return BCryptGenRandom(NULL, data, (ULONG)len, BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0;
}
