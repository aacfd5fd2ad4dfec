// libFuzzer's driver is linked into jam-fuzz (Package.swift); this target only declares it.
#include "CLibFuzzer.h"
