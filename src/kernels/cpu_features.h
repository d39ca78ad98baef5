// Which SIMD kernels this CPU can run, and which ones we choose to run.
//
// Every kernel exists as a scalar reference plus optional AVX2 and AVX-512
// versions. Selection happens once per process from cpuid, and the
// MNEME_KERNELS environment variable (scalar|avx2|avx512) can force a lower
// level for testing and benchmarking; a request above what the CPU supports is
// clamped down (never an illegal instruction). Tests call each level
// explicitly, so the process-wide choice is never mutated.
#pragma once

#include <optional>
#include <string_view>

namespace mneme::kernels {

// Kernel levels, ordered: a higher level implies every lower one.
//   kAvx2:   AVX2 + FMA + F16C (Haswell / Zen 1 and later).
//   kAvx512: AVX-512 F/BW/VL/DQ + AVX512_VNNI + AVX512_BF16 (Zen 4,
//            Sapphire Rapids and later).
enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

const char* IsaName(Isa isa);
std::optional<Isa> ParseIsa(std::string_view name);

// Highest level this CPU supports (cpuid via __builtin_cpu_supports).
Isa DetectIsa();

// DetectIsa() lowered by `override_name` (the MNEME_KERNELS value) when set
// and valid; an unknown name or one above the CPU's level is ignored/clamped.
Isa ChooseIsa(Isa detected, const char* override_name);

// The process-wide choice: ChooseIsa(DetectIsa(), getenv("MNEME_KERNELS")),
// computed once on first use and immutable afterwards.
Isa ActiveIsa();

// True when `isa` can run on this CPU.
inline bool IsaSupported(Isa isa) {
  return static_cast<int>(isa) <= static_cast<int>(DetectIsa());
}

}  // namespace mneme::kernels
