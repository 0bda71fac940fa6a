// Where a token's experts sit: the expected number of distinct places (nodes, or GPUs) its
// top-k experts fall on under balanced routing. A dispatcher that sends a token once per place
// and fans it out there (DeepEP's internode kernels: one RDMA copy per target node to the GPU of
// the same in-node index, NVLink forwarding to the experts' GPUs; DeepSeek-V3 report,
// arXiv:2412.19437 sec. 3.2.2) moves tokens x this many copies instead of tokens x top_k.
//
// Balanced routing: every eligible expert is equally likely and a token's k experts are
// distinct, so the experts a place holds are a hypergeometric draw. Group-limited routing
// (DeepSeek-V3's node-limited routing; Hugging Face n_group / topk_group): the experts split into
// `groups` contiguous groups, a token picks `groups_per_token` of them and its k experts among
// theirs, so it reaches at most that many groups' places.
#pragma once

namespace trainsim {

struct ExpertRouting {
  int experts = 0;
  int top_k = 0;
  int groups = 0;            // 0 or 1: no group limit
  int groups_per_token = 0;  // 0 or >= groups: no group limit
};

// Expected distinct places among `places` (experts laid out contiguously, experts / places
// each) that one token's top-k experts occupy; in [1, min(places, top_k)]. places <= 1: 1.
double expected_places_per_token(const ExpertRouting& r, int places);

}  // namespace trainsim
