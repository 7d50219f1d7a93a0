//! A `serde_json::Value` built by its own visitor, the same value for every input except that
//! an image block's `data` is skipped without being copied (see `parse_line`).

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

pub struct LeanValue(pub Value);

impl<'de> Deserialize<'de> for LeanValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LeanValue, D::Error> {
        d.deserialize_any(LeanVisitor).map(LeanValue)
    }
}

struct LeanVisitor;

impl<'de> Visitor<'de> for LeanVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        LeanValue::deserialize(d).map(|v| v.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(LeanValue(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let image = key == "data" && out.get("type").and_then(Value::as_str) == Some("image");
            let value = if image {
                map.next_value::<IgnoredAny>()?;
                Value::String(String::new())
            } else {
                map.next_value::<LeanValue>()?.0
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lean(s: &str) -> Value {
        serde_json::from_str::<LeanValue>(s).unwrap().0
    }

    #[test]
    fn lean_value_equals_serde_json_value_but_for_image_data() {
        for s in [
            r#"{"a":[1,-2,3.5,1e400,true,null,"x\n\u00e9"],"b":{"c":{}},"a":2,"z":18446744073709551615}"#,
            r#"[{"type":"text","data":"kept"},{"data":"kept","type":"image"}]"#,
            r#""just a string""#,
        ] {
            let plain: Result<Value, _> = serde_json::from_str(s);
            match plain {
                Ok(v) => assert_eq!(lean(s), v, "{s}"),
                Err(_) => assert!(serde_json::from_str::<LeanValue>(s).is_err(), "{s}"),
            }
        }
        let v =
            lean(r#"{"content":[{"type":"image","data":"iVBORw0KGgo","mimeType":"image/png"}]}"#);
        assert_eq!(v["content"][0]["data"], "");
        assert_eq!(v["content"][0]["mimeType"], "image/png");
    }

    #[test]
    fn lean_value_keeps_serde_json_errors_and_depth_limit() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert_eq!(
            serde_json::from_str::<LeanValue>(&deep).is_err(),
            serde_json::from_str::<Value>(&deep).is_err()
        );
        let e = serde_json::from_str::<LeanValue>(r#"{"a":"#).err().unwrap();
        let f = serde_json::from_str::<Value>(r#"{"a":"#).err().unwrap();
        assert_eq!(e.to_string(), f.to_string());
    }
}
