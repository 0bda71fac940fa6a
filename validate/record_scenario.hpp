// A published record (data/published_runs.json and files like it) read as a scenario: the
// record's fields as their sources name them ("FULL_SHARD", "interleaved 1F1B (v=3)",
// "bfloat16", "8x 200Gb/s HDR", "~480") mapped onto the scenario format by general rules, each
// rule a reading of how a field is written, never of which run it is. What a record leaves out is
// filled by stated defaults and listed in the run's assumptions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::validate {

// Builds the scenario JSON (schema_version 1) a published training record describes.
// Throws ScenarioError naming the record's field when it cannot.
nlohmann::json scenario_from_record(const nlohmann::json& record, std::vector<std::string>& assumptions);

namespace record {

std::string lower(std::string s);
// A number, or the first number in a string ("~480", "50368 (MPT default)", "3-equivalent").
std::optional<double> number_in(const nlohmann::json& v);
std::optional<double> field(const nlohmann::json& obj, const char* key);
// The first of `keys` the object has as a number (a field's other spellings).
std::optional<double> first_field(const nlohmann::json& obj, std::initializer_list<const char*> keys);
// A measured figure only when above zero (a record's 0 or negative says "not measured").
std::optional<double> positive(std::optional<double> v);
// A regex-matched decimal as a double, never throwing: a number beyond double's range is inf
// (std::stod would throw std::out_of_range, which is no scenario error).
double decimal(const std::string& digits);
// A string as is, anything else as its JSON text; "" when absent.
std::string text_field(const nlohmann::json& obj, const char* key);
// Published figures are doubles; the scenario wants integers. Out of range is bad input.
int64_t whole(double v);
int small(double v);
// The GPU preset a hardware description names ("" when none).
std::string gpu_preset(const std::string& description);
// Whether the record names its attention kernel (model.attn_impl, or FlashAttention, SDPA,
// "unfused", a fused softmax, ... in model.attn or the notes).
bool attention_stated(const nlohmann::json& record);
// The cluster network a hardware description gives ("8x 200Gb/s HDR", "4x HDR IB",
// "1600 Gbps node-node", "3.2 Tbps per node"), into `network` (nics_per_node, nic_bandwidth).
void network_from_text(const std::string& text, nlohmann::json& network, std::vector<std::string>& notes);
// The GPUs a record's hardware ran on: num_gpus (or gpus), else num_nodes x gpus_per_node.
// Throws ScenarioError naming hardware.num_gpus when neither is a positive number.
int gpu_count(const nlohmann::json& hardware, std::vector<std::string>& notes);
// The cluster a record's hardware describes: the GPU preset `gpu` on the node of its generation
// (DGX A100 for V100/A100, the H800 cluster, DGX H100 otherwise, with DGX-1 V100 and DGX B200
// NVLink), `num_gpus` of them, and the network its inter_node text gives.
nlohmann::json cluster_from_record(const nlohmann::json& hardware, const std::string& gpu, int num_gpus,
                                   std::vector<std::string>& notes);

}  // namespace record
}  // namespace trainsim::validate
