// Placeholder: the verifier lands with the text-form work.
#include "ir/verifier.h"

namespace dlc {
Status verifyGraph(const Graph &, const VerifyOptions &) { return Status::ok(); }
} // namespace dlc
