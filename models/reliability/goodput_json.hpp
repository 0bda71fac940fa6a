// The goodput report as JSON (the "goodput" key of `trainsim run --json`) and as text.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/reliability/goodput.hpp"

namespace trainsim {

nlohmann::json goodput_to_json(const GoodputReport& g);
std::string goodput_to_text(const GoodputReport& g);

}  // namespace trainsim
