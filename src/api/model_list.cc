// Model objects and lists (see model_list.h).
#include "api/model_list.h"

#include "api/json_io.h"

namespace mneme::api {

nlohmann::ordered_json ModelObjectJson(const ModelInfo& model) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["id"] = model.id;
  j["object"] = "model";
  j["created"] = model.created;
  j["owned_by"] = model.owned_by;
  return j;
}

std::string ModelJson(const ModelInfo& model) {
  return DumpJson(ModelObjectJson(model));
}

std::string ModelListJson(std::span<const ModelInfo> models) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["object"] = "list";
  nlohmann::ordered_json data = nlohmann::ordered_json::array();
  for (const ModelInfo& m : models) data.push_back(ModelObjectJson(m));
  j["data"] = std::move(data);
  return DumpJson(j);
}

}  // namespace mneme::api
