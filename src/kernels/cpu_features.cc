// cpuid-based kernel level detection and the MNEME_KERNELS override.
#include "kernels/cpu_features.h"

#include <cstdlib>

namespace mneme::kernels {

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

std::optional<Isa> ParseIsa(std::string_view name) {
  if (name == "scalar") return Isa::kScalar;
  if (name == "avx2") return Isa::kAvx2;
  if (name == "avx512") return Isa::kAvx512;
  return std::nullopt;
}

Isa DetectIsa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  if (!avx2) return Isa::kScalar;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bf16");
  return avx512 ? Isa::kAvx512 : Isa::kAvx2;
#else
  return Isa::kScalar;
#endif
}

Isa ChooseIsa(Isa detected, const char* override_name) {
  if (override_name == nullptr || *override_name == '\0') return detected;
  std::optional<Isa> wanted = ParseIsa(override_name);
  if (!wanted.has_value()) return detected;
  return static_cast<int>(*wanted) < static_cast<int>(detected) ? *wanted : detected;
}

Isa ActiveIsa() {
  static const Isa isa = ChooseIsa(DetectIsa(), std::getenv("MNEME_KERNELS"));
  return isa;
}

}  // namespace mneme::kernels
