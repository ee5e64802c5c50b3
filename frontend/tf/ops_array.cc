// TensorFlow ops -> dlc IR: see convert.h.
#include "frontend/tf/convert.h"

namespace dlc::tf::detail {

std::vector<ConverterRow> arrayConverters() { return {}; }

} // namespace dlc::tf::detail
