//! A document as the domain writes it, under its schema string: what
//! report's JSON exporters serialize where analyze or model already holds
//! the document's fields in the document's order.

use serde::Serialize;

/// `{"schema": ..., <the document's own fields>}`.
#[derive(Debug, Serialize)]
pub struct Schema<'a, T> {
    pub schema: &'static str,
    #[serde(flatten)]
    pub document: &'a T,
}

/// A document type and the schema string report writes over it, for an
/// exporter that serves several (the lab's experiments).
pub trait Documented: Serialize {
    const SCHEMA: &'static str;
}

impl<'a, T> Schema<'a, T> {
    pub fn new(schema: &'static str, document: &'a T) -> Self {
        Schema { schema, document }
    }
}
