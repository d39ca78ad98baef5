// GET /v1/models and GET /v1/models/{id}: the models this server serves,
// in OpenAI's shape.
//
//   {"object":"list","data":[{"id":"qwen2.5-0.5b","object":"model",
//                             "created":1700000000,"owned_by":"mneme"}]}
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

namespace mneme::api {

struct ModelInfo {
  std::string id;
  int64_t created = 0;  // Unix seconds (the server's start or the file's mtime)
  std::string owned_by = "mneme";
};

nlohmann::ordered_json ModelObjectJson(const ModelInfo& model);
std::string ModelJson(const ModelInfo& model);
std::string ModelListJson(std::span<const ModelInfo> models);

}  // namespace mneme::api
