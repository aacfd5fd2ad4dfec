#ifndef OPENJAM_CLIBFUZZER_H
#define OPENJAM_CLIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs with their own main: parses libFuzzer's flags from
/// argv and fuzzes (or replays files through) `callback`.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
