//! `[transport]` checked against the rest of the configuration: the workload it carries,
//! its timeouts, windows and acknowledgements, and NSCC's settings against the router's
//! buffers and the congestion control.

use super::{Config, ConfigError, MAX_CYCLES};
use crate::congestion::Control;
use crate::transport::{Transport, TransportKind, UecCongestion, UecParams, MAX_WINDOW};

impl Config {
    /// `[transport]` checked against the rest.
    pub(super) fn check_transport(&self) -> Result<(), ConfigError> {
        let t = &self.transport;
        for (table, set, kind) in
            [("rc", t.rc.is_some(), TransportKind::Rc), ("uec", t.uec.is_some(), TransportKind::Uec)]
        {
            if set && t.kind != kind {
                return Err(ConfigError::new(
                    format!("transport.{table}"),
                    format!("sets the parameters of transport.kind = \"{table}\", but that is not the kind: set it, or remove [transport.{table}]"),
                ));
            }
        }
        let Some(transport) = self.transport() else { return Ok(()) };
        let name = if transport.selective() { "uec" } else { "rc" };
        if self.workload.is_none() {
            return Err(ConfigError::new(
                "transport.kind",
                format!("a transport carries application messages: \"{name}\" needs a [workload] (synthetic traffic has no messages)"),
            ));
        }
        if self.routing.ecmp_flows > 1 {
            return Err(ConfigError::new(
                "routing.ecmp_flows",
                format!(
                    "transport.kind = \"{name}\" runs one connection per pair of ranks; got {} ECMP flows per pair (set ecmp_flows = 1)",
                    self.routing.ecmp_flows
                ),
            ));
        }
        let key = |k: &str| format!("transport.{name}.{k}");
        if transport.timeout() == 0 || transport.timeout() > MAX_CYCLES {
            return Err(ConfigError::new(
                key("timeout"),
                format!("must be at least 1 and at most {MAX_CYCLES} cycles, got {}", transport.timeout()),
            ));
        }
        match transport {
            Transport::Rc(rc) if rc.ack_every == 0 => {
                return Err(ConfigError::new(
                    key("ack_every"),
                    "must be at least 1 (packets per acknowledgement)",
                ));
            }
            Transport::Uec(uec) if uec.reorder_threshold == 0 => {
                return Err(ConfigError::new(
                    key("reorder_threshold"),
                    "must be at least 1 (packets acknowledged after a lost one)",
                ));
            }
            Transport::Uec(uec) if uec.congestion == UecCongestion::Nscc => self.check_nscc(&uec)?,
            Transport::Uec(uec) if (uec.rtt, uec.target, uec.ecn_kmin, uec.ecn_kmax) != (0, 0, 0, 0) => {
                return Err(ConfigError::new(
                    key("congestion"),
                    "rtt, target, ecn_kmin and ecn_kmax are NSCC's: set congestion = \"nscc\" or remove them",
                ));
            }
            _ => {}
        }
        let window = transport.window();
        if window == 0 || window > MAX_WINDOW {
            return Err(ConfigError::new(
                key("window"),
                format!("must be in 1..={MAX_WINDOW} packets (a PSN carries 15 bits), got {window}"),
            ));
        }
        let room = self.router.input_buffer.min(self.router.output_buffer);
        let ack_size = transport.ack_size();
        if ack_size as u32 > room || ack_size > self.router.packet_size {
            return Err(ConfigError::new(
                key("ack_size"),
                format!(
                    "must be at most router.packet_size ({}) and fit the router's buffers ({room} phits), got {ack_size}",
                    self.router.packet_size
                ),
            ));
        }
        Ok(())
    }

    /// NSCC's settings, checked against the router's buffers and the congestion control.
    fn check_nscc(&self, uec: &UecParams) -> Result<(), ConfigError> {
        if self.congestion.control != Control::None {
            return Err(ConfigError::new(
                "transport.uec.congestion",
                "NSCC is the connections' congestion control: it runs with congestion.control = \"none\" (switches mark ECN for it)",
            ));
        }
        let out = self.router.output_buffer;
        if uec.ecn_kmax > out {
            return Err(ConfigError::new(
                "transport.uec.ecn_kmax",
                format!(
                    "an output VC holds at most router.output_buffer = {out} phits, got {}",
                    uec.ecn_kmax
                ),
            ));
        }
        if uec.ecn_kmin != 0 && uec.ecn_kmax != 0 && uec.ecn_kmin >= uec.ecn_kmax {
            return Err(ConfigError::new(
                "transport.uec.ecn_kmin",
                format!("must be below ecn_kmax ({}), got {}", uec.ecn_kmax, uec.ecn_kmin),
            ));
        }
        if uec.ecn_kmin >= out {
            return Err(ConfigError::new(
                "transport.uec.ecn_kmin",
                format!(
                    "an output VC holds at most router.output_buffer = {out} phits, so {} never marks",
                    uec.ecn_kmin
                ),
            ));
        }
        if uec.rtt > MAX_CYCLES || uec.target > MAX_CYCLES {
            return Err(ConfigError::new(
                "transport.uec.rtt",
                format!("rtt and target must be at most {MAX_CYCLES} cycles"),
            ));
        }
        Ok(())
    }
}
