//! What one thread's HTTP/2 connections saw in a step: the server's SETTINGS, the streams allowed,
//! resets and GOAWAYs, and the first protocol failure in words.

use super::session::ServerSettings;
use crate::report::{H2Report, H2Settings};

#[derive(Debug, Clone, Default)]
pub(crate) struct H2Recorder {
    pub server: Option<ServerSettings>,
    /// Streams a connection could have open (the ask within the server's limit), the fewest seen.
    pub streams: Option<u32>,
    pub resets: u64,
    pub goaways: u64,
    pub first_error: Option<String>,
}

impl H2Recorder {
    /// A connection settled with `server`'s SETTINGS, allowing `streams`.
    pub(crate) fn settled(&mut self, server: ServerSettings, streams: usize) {
        self.server.get_or_insert(server);
        let s = streams as u32;
        self.streams = Some(self.streams.map_or(s, |m| m.min(s)));
    }

    pub(crate) fn error(&mut self, why: &str) {
        if self.first_error.is_none() {
            self.first_error = Some(why.to_string());
        }
    }

    pub(crate) fn merge(&mut self, o: &H2Recorder) {
        if self.server.is_none() {
            self.server = o.server;
        }
        self.streams = match (self.streams, o.streams) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.resets += o.resets;
        self.goaways += o.goaways;
        if self.first_error.is_none() {
            self.first_error.clone_from(&o.first_error);
        }
    }

    /// The step's report; `asked` is the streams per connection the plan asked for.
    pub(crate) fn report(&self, asked: u32) -> H2Report {
        H2Report {
            streams_asked: asked,
            streams: self.streams,
            server_settings: self.server.map(|s| H2Settings {
                header_table_size: s.header_table_size,
                max_concurrent_streams: s.max_concurrent_streams,
                initial_window_size: s.initial_window_size,
                max_frame_size: s.max_frame_size,
                max_header_list_size: s.max_header_list_size,
            }),
            client_window: super::frame::CLIENT_WINDOW,
            resets: self.resets,
            goaways: self.goaways,
            first_error: self.first_error.clone(),
        }
    }
}
