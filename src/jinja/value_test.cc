// Tests for runtime values: how they print, compare and convert from JSON.
// Expected strings are the reference's (@huggingface/jinja) output.
#include "jinja/value.h"

#include <gtest/gtest.h>

namespace mneme::jinja {
namespace {

TEST(ValueTest, DisplayFollowsTheReference) {
  EXPECT_EQ(Display(Value::Int(1)), "1");
  EXPECT_EQ(Display(Value::Float(1)), "1.0");
  EXPECT_EQ(Display(Value::Float(-0.0)), "-0.0");
  EXPECT_EQ(Display(Value::Float(2.5)), "2.5");
  EXPECT_EQ(Display(Value::Float(1152921504606846976.0)), "1152921504606846976.0");
  EXPECT_EQ(Display(Value::Float(1.5e23)), "1.5e+23");
  EXPECT_EQ(Display(Value::Bool(true)), "true");
  Value arr =
      Value::Array({Value::Int(1), Value::String("a"), Value::Float(2), Value::Null(), Value()});
  EXPECT_EQ(Display(arr), "[1, \"a\", 2, null, undefined]");
  EXPECT_EQ(Display(Value::Object({{"k", Value::Bool(false)}})), "{\"k\": false}");
}

TEST(ValueTest, JsStringIsJavaScriptToString) {
  EXPECT_EQ(JsString(Value::Float(1)), "1");
  Value arr = Value::Array({Value::Int(1), Value::Float(2), Value::Array({Value::Int(3)})});
  EXPECT_EQ(JsString(arr), "1,2.0,[3]");
  EXPECT_EQ(JsString(Value::Object()), "[object Map]");
}

TEST(ValueTest, TruthinessIsPythonLike) {
  EXPECT_FALSE(Truthy(Value()));
  EXPECT_FALSE(Truthy(Value::Null()));
  EXPECT_FALSE(Truthy(Value::String("")));
  EXPECT_FALSE(Truthy(Value::Int(0)));
  EXPECT_FALSE(Truthy(Value::Array()));
  EXPECT_FALSE(Truthy(Value::Object()));
  EXPECT_TRUE(Truthy(Value::Namespace()));  // the reference: a Map is always truthy
  EXPECT_TRUE(Truthy(Value::String("0")));
}

TEST(ValueTest, LooseEqualityIsJavaScripts) {
  EXPECT_TRUE(LooseEquals(Value::Int(1), Value::Float(1)));
  EXPECT_TRUE(LooseEquals(Value::String("1"), Value::Int(1)));
  EXPECT_TRUE(LooseEquals(Value::Bool(true), Value::Int(1)));
  EXPECT_TRUE(LooseEquals(Value::Null(), Value()));
  EXPECT_TRUE(LooseEquals(Value::String(""), Value::Int(0)));
  EXPECT_FALSE(LooseEquals(Value::Null(), Value::Bool(false)));
  Value a = Value::Array({Value::Int(1)});
  EXPECT_FALSE(LooseEquals(a, Value::Array({Value::Int(1)})));  // identity
  EXPECT_TRUE(LooseEquals(a, a));
  EXPECT_FALSE(StrictEquals(Value::String("1"), Value::Int(1)));
}

TEST(ValueTest, FromJsonOrdersIntegerKeysFirstAndIntegralFloatsAsInts) {
  auto j =
      nlohmann::ordered_json::parse(R"({"b": 1.0, "2": 2.5, "1": [true], "a": null, "01": 3})");
  auto parsed = Value::FromJson(j);
  ASSERT_TRUE(parsed.ok());
  Value v = *parsed;
  ASSERT_TRUE(v.is_object());
  std::vector<std::string> keys;
  for (const auto& [k, x] : v.object().entries) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"1", "2", "b", "a", "01"}));
  EXPECT_TRUE(v.object().Find("b")->is_int());
  EXPECT_TRUE(v.object().Find("2")->is_float());
}

TEST(ValueTest, JsonIndentAndSeparators) {
  Value v = Value::Object({{"a", Value::Array({Value::Int(1), Value::Object()})}, {"b", Value()}});
  std::string out;
  JsonOptions indented;
  indented.indent = 2;
  ASSERT_TRUE(AppendJson(v, indented, true, 0, &out).ok());
  EXPECT_EQ(out, "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": null\n}");
  out.clear();
  JsonOptions compact;
  compact.has_separators = true;
  compact.item_separator = ",";
  compact.key_separator = ":";
  ASSERT_TRUE(AppendJson(v, compact, true, 0, &out).ok());
  EXPECT_EQ(out, "{\"a\":[1,{}],\"b\":null}");
}

TEST(ValueTest, CyclicValuesFailInsteadOfRecursingForever) {
  Value ns = Value::Namespace();
  ns.object().Set("self", ns);
  std::string out;
  EXPECT_FALSE(AppendJson(ns, JsonOptions(), true, 0, &out).ok());
  Value arr = Value::Array();
  arr.array().items.push_back(arr);
  EXPECT_FALSE(JsString(arr).empty());  // bounded, no crash
  ns.object().entries.clear();          // break the cycles so the test does not leak
  arr.array().items.clear();
}

TEST(ValueTest, FromJsonRefusesDeepNesting) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (int i = 0; i < 1000; ++i) j = nlohmann::ordered_json::array({j});
  EXPECT_FALSE(Value::FromJson(j).ok());
}

TEST(ValueTest, ContainersRecordTheirDepth) {
  Value leaf = Value::Array();
  Value mid = Value::Object({{"a", leaf}});
  Value top = Value::Array({Value::Int(1), mid});
  EXPECT_EQ(leaf.depth(), 1u);
  EXPECT_EQ(mid.depth(), 2u);
  EXPECT_EQ(top.depth(), 3u);
  EXPECT_EQ(Value::String("x").depth(), 0u);
}

TEST(ValueTest, TuplesDoNotSerialize) {
  std::string out;
  EXPECT_FALSE(
      AppendJson(Value::Array({Value::Int(1)}, /*is_tuple=*/true), JsonOptions(), true, 0, &out)
          .ok());
}

}  // namespace
}  // namespace mneme::jinja
