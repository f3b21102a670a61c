//! The OTF2 library's reader, wrapped: the global definitions a replay needs, and one
//! location's events at a time. All `unsafe` code of the crate is here; the callbacks only
//! copy what they are given into Rust values.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::Mutex;

use crate::ffi::*;

/// The archive is read under this lock: the library's error handler is process-wide.
static LOCK: Mutex<()> = Mutex::new(());

/// The last error the library reported (its own message, formatted).
static LAST_ERROR: Mutex<String> = Mutex::new(String::new());

/// A region (a function; MPI calls are regions of paradigm MPI).
#[derive(Clone, Debug)]
pub(crate) struct Region {
    pub(crate) paradigm: OTF2_Paradigm,
}

/// A group of locations or of ranks.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub(crate) kind: OTF2_GroupType,
    pub(crate) paradigm: OTF2_Paradigm,
    pub(crate) flags: OTF2_GroupFlag,
    pub(crate) members: Vec<u64>,
}

/// A communicator: its name and group.
#[derive(Clone, Debug)]
pub(crate) struct CommDef {
    pub(crate) name: OTF2_StringRef,
    pub(crate) group: OTF2_GroupRef,
}

/// The global definitions a replay needs.
#[derive(Debug, Default)]
pub(crate) struct Definitions {
    /// Timer ticks per second.
    pub(crate) timer_resolution: u64,
    /// The trace's first timestamp.
    pub(crate) global_offset: u64,
    pub(crate) strings: HashMap<OTF2_StringRef, String>,
    pub(crate) regions: HashMap<OTF2_RegionRef, Region>,
    pub(crate) groups: HashMap<OTF2_GroupRef, Group>,
    pub(crate) comms: HashMap<OTF2_CommRef, CommDef>,
    /// Every location: (id, number of events).
    pub(crate) locations: Vec<(OTF2_LocationRef, u64)>,
}

impl Definitions {
    /// The string `s` (empty when undefined).
    pub(crate) fn string(&self, s: OTF2_StringRef) -> &str {
        self.strings.get(&s).map_or("", String::as_str)
    }
}

/// One event of a location, as the replay needs it; `at` is the event's timestamp (ticks)
/// and `position` its index among the location's events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) at: u64,
    pub(crate) position: u64,
    pub(crate) what: What,
}

/// What an event says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum What {
    Enter(OTF2_RegionRef),
    Leave(OTF2_RegionRef),
    /// `MpiSend` (blocking: `request` none) or `MpiIsend`.
    Send {
        peer: u32,
        comm: OTF2_CommRef,
        tag: u32,
        bytes: u64,
        request: Option<u64>,
    },
    /// `MpiRecv` (blocking), or a non-blocking receive posted by `MpiIrecvRequest` whose
    /// fields its `MpiIrecv` filled in (`peer` none while it has not).
    Recv {
        peer: Option<u32>,
        comm: OTF2_CommRef,
        tag: u32,
        bytes: u64,
        request: Option<u64>,
    },
    /// `MpiIsendComplete`, `MpiIrecv`: the request completed in this call.
    Complete(u64),
    /// `MpiRequestCancelled`.
    Cancelled(u64),
    /// `MpiCollectiveEnd`.
    Collective {
        op: OTF2_CollectiveOp,
        comm: OTF2_CommRef,
        root: u32,
        sent: u64,
        received: u64,
    },
}

/// An open archive.
pub(crate) struct Archive {
    reader: *mut OTF2_Reader,
    /// Its global definitions.
    pub(crate) defs: Definitions,
    files_open: bool,
    _lock: std::sync::MutexGuard<'static, ()>,
}

/// The library's message for `code`, with the last message its error handler received.
fn failure(what: &str, code: OTF2_ErrorCode) -> String {
    let last = std::mem::take(&mut *LAST_ERROR.lock().unwrap_or_else(|e| e.into_inner()));
    // SAFETY: OTF2_Error_GetDescription returns a static string for any code.
    let description =
        unsafe { CStr::from_ptr(OTF2_Error_GetDescription(code)) }.to_string_lossy().into_owned();
    if last.is_empty() {
        format!("{what}: {description}")
    } else {
        format!("{what}: {last}")
    }
}

fn check(what: &str, code: OTF2_ErrorCode) -> Result<(), String> {
    if code == OTF2_SUCCESS {
        Ok(())
    } else {
        Err(failure(what, code))
    }
}

/// Keeps the library's error messages (it would print them to stderr) for our errors.
unsafe extern "C" fn on_error(
    _user: *mut c_void,
    _file: *const c_char,
    _line: u64,
    _function: *const c_char,
    code: OTF2_ErrorCode,
    format: *const c_char,
    va: *mut __va_list_tag,
) -> OTF2_ErrorCode {
    let mut buffer = [0 as c_char; 512];
    // SAFETY: the library passes a printf format and its arguments; vsnprintf writes at
    // most the buffer's length, NUL-terminated.
    let text = unsafe {
        if format.is_null() {
            String::new()
        } else {
            vsnprintf(buffer.as_mut_ptr(), buffer.len() as _, format, va);
            CStr::from_ptr(buffer.as_ptr()).to_string_lossy().into_owned()
        }
    };
    if let Ok(mut last) = LAST_ERROR.lock() {
        *last = text;
    }
    code
}

const SUCCESS: OTF2_CallbackCode = OTF2_CALLBACK_SUCCESS as OTF2_CallbackCode;

/// `user` as the definitions being read.
///
/// # Safety
/// `user` is the `&mut Definitions` registered with the callbacks.
unsafe fn defs<'a>(user: *mut c_void) -> &'a mut Definitions {
    unsafe { &mut *(user as *mut Definitions) }
}

unsafe extern "C" fn on_clock(
    user: *mut c_void,
    resolution: u64,
    offset: u64,
    _length: u64,
    _real: u64,
) -> OTF2_CallbackCode {
    let d = unsafe { defs(user) };
    d.timer_resolution = resolution;
    d.global_offset = offset;
    SUCCESS
}

unsafe extern "C" fn on_string(
    user: *mut c_void,
    id: OTF2_StringRef,
    text: *const c_char,
) -> OTF2_CallbackCode {
    let d = unsafe { defs(user) };
    let text = if text.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    };
    d.strings.insert(id, text);
    SUCCESS
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn on_region(
    user: *mut c_void,
    id: OTF2_RegionRef,
    _name: OTF2_StringRef,
    _canonical: OTF2_StringRef,
    _description: OTF2_StringRef,
    _role: OTF2_RegionRole,
    paradigm: OTF2_Paradigm,
    _flags: OTF2_RegionFlag,
    _file: OTF2_StringRef,
    _begin: u32,
    _end: u32,
) -> OTF2_CallbackCode {
    unsafe { defs(user) }.regions.insert(id, Region { paradigm });
    SUCCESS
}

unsafe extern "C" fn on_location(
    user: *mut c_void,
    id: OTF2_LocationRef,
    _name: OTF2_StringRef,
    _kind: OTF2_LocationType,
    events: u64,
    _group: OTF2_LocationGroupRef,
) -> OTF2_CallbackCode {
    unsafe { defs(user) }.locations.push((id, events));
    SUCCESS
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn on_group(
    user: *mut c_void,
    id: OTF2_GroupRef,
    _name: OTF2_StringRef,
    kind: OTF2_GroupType,
    paradigm: OTF2_Paradigm,
    flags: OTF2_GroupFlag,
    count: u32,
    members: *const u64,
) -> OTF2_CallbackCode {
    let members = if members.is_null() || count == 0 {
        Vec::new()
    } else {
        // SAFETY: the library passes `count` members.
        unsafe { std::slice::from_raw_parts(members, count as usize) }.to_vec()
    };
    unsafe { defs(user) }.groups.insert(id, Group { kind, paradigm, flags, members });
    SUCCESS
}

unsafe extern "C" fn on_comm(
    user: *mut c_void,
    id: OTF2_CommRef,
    name: OTF2_StringRef,
    group: OTF2_GroupRef,
    _parent: OTF2_CommRef,
    _flags: OTF2_CommFlag,
) -> OTF2_CallbackCode {
    unsafe { defs(user) }.comms.insert(id, CommDef { name, group });
    SUCCESS
}

/// Why reading a location's events was cut off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    /// More events came than the definitions record: a damaged file the library reads
    /// round and round (it would grow without end).
    TooMany,
    /// A stop was asked for (a signal).
    Asked,
}

/// How often (in events) the callbacks ask whether to stop.
const STOP_CHECK_EVERY: u64 = 4096;

/// The events being read of one location, and its posted receives by request.
struct Events<'a> {
    events: Vec<Event>,
    posted: HashMap<u64, usize>,
    /// Events the callbacks have seen, and the most the definitions allow.
    seen: u64,
    limit: u64,
    stop: &'a dyn Fn() -> bool,
    cut: Option<Cut>,
}

impl Events<'_> {
    /// Counts one more event; false (and why) when reading must stop.
    fn admit(&mut self) -> bool {
        self.seen += 1;
        if self.seen > self.limit {
            self.cut = Some(Cut::TooMany);
        } else if self.seen.is_multiple_of(STOP_CHECK_EVERY) && (self.stop)() {
            self.cut = Some(Cut::Asked);
        }
        self.cut.is_none()
    }

    fn push(&mut self, at: u64, position: u64, what: What) {
        self.events.push(Event { at, position, what });
    }
}

const INTERRUPT: OTF2_CallbackCode = OTF2_CALLBACK_INTERRUPT as OTF2_CallbackCode;

/// `user` as the events being read, or `None` when reading must stop (the callback then
/// returns [`INTERRUPT`]).
///
/// # Safety
/// `user` is the `&mut Events` registered with the callbacks.
unsafe fn events<'a, 'b>(user: *mut c_void) -> Option<&'a mut Events<'b>> {
    let e = unsafe { &mut *(user as *mut Events) };
    e.admit().then_some(e)
}

unsafe extern "C" fn on_enter(
    _l: OTF2_LocationRef,
    at: OTF2_TimeStamp,
    position: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
    region: OTF2_RegionRef,
) -> OTF2_CallbackCode {
    let Some(e) = (unsafe { events(user) }) else { return INTERRUPT };
    e.push(at, position, What::Enter(region));
    SUCCESS
}

unsafe extern "C" fn on_leave(
    _l: OTF2_LocationRef,
    at: OTF2_TimeStamp,
    position: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
    region: OTF2_RegionRef,
) -> OTF2_CallbackCode {
    let Some(e) = (unsafe { events(user) }) else { return INTERRUPT };
    e.push(at, position, What::Leave(region));
    SUCCESS
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn on_send(
    _l: OTF2_LocationRef,
    at: OTF2_TimeStamp,
    position: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
    peer: u32,
    comm: OTF2_CommRef,
    tag: u32,
    bytes: u64,
) -> OTF2_CallbackCode {
    let Some(e) = (unsafe { events(user) }) else { return INTERRUPT };
    e.push(at, position, What::Send { peer, comm, tag, bytes, request: None });
    SUCCESS
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn on_isend(
    _l: OTF2_LocationRef,
    at: OTF2_TimeStamp,
    position: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
    peer: u32,
    comm: OTF2_CommRef,
    tag: u32,
    bytes: u64,
    request: u64,
) -> OTF2_CallbackCode {
    let Some(e) = (unsafe { events(user) }) else { return INTERRUPT };
    e.push(at, position, What::Send { peer, comm, tag, bytes, request: Some(request) });
    SUCCESS
}

unsafe extern "C" fn on_isend_complete(
    _l: OTF2_LocationRef,
    at: OTF2_TimeStamp,
    position: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
    request: u64,
) -> OTF2_CallbackCode {
    let Some(e) = (unsafe { events(user) }) else { return INTERRUPT };
    e.push(at, position, What::Complete(request));
    SUCCESS
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn on_recv(
    _l: OTF2_LocationRef,
    at: OTF2_TimeStamp,
    position: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
    peer: u32,
    comm: OTF2_CommRef,
    tag: u32,
    bytes: u64,
) -> OTF2_CallbackCode {
    let Some(e) = (unsafe { events(user) }) else { return INTERRUPT };
    e.push(at, position, What::Recv { peer: Some(peer), comm, tag, bytes, request: None });
    SUCCESS
}

unsafe extern "C" fn on_irecv_request(
    _l: OTF2_LocationRef,
    at: OTF2_TimeStamp,
    position: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
    request: u64,
) -> OTF2_CallbackCode {
    let Some(e) = (unsafe { events(user) }) else { return INTERRUPT };
    e.posted.insert(request, e.events.len());
    e.push(at, position, What::Recv { peer: None, comm: 0, tag: 0, bytes: 0, request: Some(request) });
    SUCCESS
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn on_irecv(
    _l: OTF2_LocationRef,
    at: OTF2_TimeStamp,
    position: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
    peer: u32,
    comm: OTF2_CommRef,
    tag: u32,
    bytes: u64,
    request: u64,
) -> OTF2_CallbackCode {
    let Some(e) = (unsafe { events(user) }) else { return INTERRUPT };
    let filled = What::Recv { peer: Some(peer), comm, tag, bytes, request: Some(request) };
    match e.posted.remove(&request) {
        // Posted earlier: its source, tag and size are known now.
        Some(i) => e.events[i].what = filled,
        // Its posting was not recorded: posted where it completes.
        None => e.push(at, position, filled),
    }
    e.push(at, position, What::Complete(request));
    SUCCESS
}

unsafe extern "C" fn on_cancelled(
    _l: OTF2_LocationRef,
    at: OTF2_TimeStamp,
    position: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
    request: u64,
) -> OTF2_CallbackCode {
    let Some(e) = (unsafe { events(user) }) else { return INTERRUPT };
    e.posted.remove(&request);
    e.push(at, position, What::Cancelled(request));
    SUCCESS
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn on_collective_end(
    _l: OTF2_LocationRef,
    at: OTF2_TimeStamp,
    position: u64,
    user: *mut c_void,
    _a: *mut OTF2_AttributeList,
    op: OTF2_CollectiveOp,
    comm: OTF2_CommRef,
    root: u32,
    sent: u64,
    received: u64,
) -> OTF2_CallbackCode {
    let Some(e) = (unsafe { events(user) }) else { return INTERRUPT };
    e.push(at, position, What::Collective { op, comm, root, sent, received });
    SUCCESS
}

impl Archive {
    /// Opens the archive whose anchor file is `path` and reads its global definitions.
    pub(crate) fn open(path: &str) -> Result<Archive, String> {
        let lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let c_path = CString::new(path).map_err(|_| "the path holds a NUL byte".to_string())?;
        // SAFETY: plain calls of the library's API with valid pointers; the reader is
        // closed by Drop; callbacks receive `&mut Definitions` that outlives the read.
        unsafe {
            OTF2_Error_RegisterCallback(Some(on_error), std::ptr::null_mut());
            let reader = OTF2_Reader_Open(c_path.as_ptr());
            if reader.is_null() {
                return Err(failure("not an OTF2 archive (cannot open its anchor file)", OTF2_ERROR_INVALID));
            }
            let mut archive =
                Archive { reader, defs: Definitions::default(), files_open: false, _lock: lock };
            check("setting up the reader", OTF2_Reader_SetSerialCollectiveCallbacks(reader))?;
            let global = OTF2_Reader_GetGlobalDefReader(reader);
            if global.is_null() {
                return Err(failure("cannot read the global definitions", OTF2_ERROR_INVALID));
            }
            let callbacks = OTF2_GlobalDefReaderCallbacks_New();
            OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(callbacks, Some(on_clock));
            OTF2_GlobalDefReaderCallbacks_SetStringCallback(callbacks, Some(on_string));
            OTF2_GlobalDefReaderCallbacks_SetRegionCallback(callbacks, Some(on_region));
            OTF2_GlobalDefReaderCallbacks_SetLocationCallback(callbacks, Some(on_location));
            OTF2_GlobalDefReaderCallbacks_SetGroupCallback(callbacks, Some(on_group));
            OTF2_GlobalDefReaderCallbacks_SetCommCallback(callbacks, Some(on_comm));
            let user = &mut archive.defs as *mut Definitions as *mut c_void;
            let registered = OTF2_Reader_RegisterGlobalDefCallbacks(reader, global, callbacks, user);
            OTF2_GlobalDefReaderCallbacks_Delete(callbacks);
            check("reading the global definitions", registered)?;
            let mut read = 0u64;
            check(
                "reading the global definitions",
                OTF2_Reader_ReadAllGlobalDefinitions(reader, global, &mut read),
            )?;
            OTF2_Reader_CloseGlobalDefReader(reader, global);
            Ok(archive)
        }
    }

    /// The events of `location`, in order. `stop` is asked every few thousand events
    /// whether to give up (a signal): reading then fails, saying so.
    pub(crate) fn events(
        &mut self,
        location: OTF2_LocationRef,
        stop: &dyn Fn() -> bool,
    ) -> Result<Vec<Event>, String> {
        let reader = self.reader;
        // The definitions say how many events the location recorded: reading stops past
        // that many, for a damaged file can make the library read on without end.
        let recorded = self.defs.locations.iter().find(|l| l.0 == location).map(|l| l.1);
        // SAFETY: as in `open`; the event reader is closed before returning and the
        // callbacks' `&mut Events` outlives the read.
        unsafe {
            if !self.files_open {
                check("opening the definition files", OTF2_Reader_OpenDefFiles(reader))?;
                check("opening the event files", OTF2_Reader_OpenEvtFiles(reader))?;
                self.files_open = true;
            }
            check("selecting the location", OTF2_Reader_SelectLocation(reader, location))?;
            let evt = OTF2_Reader_GetEvtReader(reader, location);
            if evt.is_null() {
                return Err(failure("cannot open the location's events", OTF2_ERROR_INVALID));
            }
            // The local definitions map the location's references to the global ones.
            let local = OTF2_Reader_GetDefReader(reader, location);
            if !local.is_null() {
                let mut read = 0u64;
                let code = OTF2_Reader_ReadAllLocalDefinitions(reader, local, &mut read);
                OTF2_Reader_CloseDefReader(reader, local);
                check("reading the location's definitions", code)?;
            }
            let callbacks = OTF2_EvtReaderCallbacks_New();
            OTF2_EvtReaderCallbacks_SetEnterCallback(callbacks, Some(on_enter));
            OTF2_EvtReaderCallbacks_SetLeaveCallback(callbacks, Some(on_leave));
            OTF2_EvtReaderCallbacks_SetMpiSendCallback(callbacks, Some(on_send));
            OTF2_EvtReaderCallbacks_SetMpiIsendCallback(callbacks, Some(on_isend));
            OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(callbacks, Some(on_isend_complete));
            OTF2_EvtReaderCallbacks_SetMpiRecvCallback(callbacks, Some(on_recv));
            OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(callbacks, Some(on_irecv_request));
            OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(callbacks, Some(on_irecv));
            OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(callbacks, Some(on_cancelled));
            OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(callbacks, Some(on_collective_end));
            let mut out = Events {
                events: Vec::new(),
                posted: HashMap::new(),
                seen: 0,
                limit: recorded.unwrap_or(u64::MAX),
                stop,
                cut: None,
            };
            let user = &mut out as *mut Events as *mut c_void;
            let registered = OTF2_Reader_RegisterEvtCallbacks(reader, evt, callbacks, user);
            OTF2_EvtReaderCallbacks_Delete(callbacks);
            // In batches, so that events without a callback (metrics, collective begins)
            // are counted and the stop asked for between batches too.
            const BATCH: u64 = 1 << 16;
            let mut read = 0u64;
            let mut result = check("reading the events", registered);
            while result.is_ok() && out.cut.is_none() {
                if stop() {
                    out.cut = Some(Cut::Asked);
                    break;
                }
                let mut batch = 0u64;
                let code = OTF2_Reader_ReadLocalEvents(reader, evt, BATCH, &mut batch);
                read += batch;
                if code == OTF2_ERROR_INTERRUPTED_BY_CALLBACK && out.cut.is_some() {
                    // Stopped by our callback: the library's message about it is not news.
                    LAST_ERROR.lock().unwrap_or_else(|e| e.into_inner()).clear();
                    break;
                }
                result = check("reading the events", code);
                if batch < BATCH {
                    break;
                }
                if recorded.is_some_and(|r| read > r) {
                    out.cut = Some(Cut::TooMany);
                }
            }
            OTF2_Reader_CloseEvtReader(reader, evt);
            result?;
            let recorded = recorded.unwrap_or(read);
            match out.cut {
                Some(Cut::Asked) => return Err("interrupted while reading the events".into()),
                Some(Cut::TooMany) => {
                    return Err(format!(
                        "its event file holds more events than the {recorded} the definitions record: \
                         the file is damaged (reading stopped there)"
                    ))
                }
                None => {}
            }
            // The library stops quietly at a damaged or cut record.
            if read != recorded {
                return Err(format!(
                    "its event file holds {read} readable events, the definitions say {recorded}: the file is cut short or damaged"
                ));
            }
            Ok(out.events)
        }
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        // SAFETY: the reader was opened by `open` and is closed once.
        unsafe {
            if self.files_open {
                OTF2_Reader_CloseEvtFiles(self.reader);
                OTF2_Reader_CloseDefFiles(self.reader);
            }
            OTF2_Reader_Close(self.reader);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mixed() -> Archive {
        let anchor = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mixed/traces.otf2");
        Archive::open(anchor).unwrap()
    }

    #[test]
    fn reading_stops_past_the_events_the_definitions_record() {
        // As a damaged file the library reads round and round would: more events come
        // than recorded. Reading stops at the first one too many.
        let mut archive = mixed();
        let (location, recorded) = archive.defs.locations[2];
        assert_eq!(recorded, 29);
        archive.defs.locations[2].1 = 5;
        let e = archive.events(location, &|| false).unwrap_err();
        assert!(e.contains("more events than the 5 the definitions record"), "{e}");
        // The others read whole.
        let (other, recorded) = archive.defs.locations[1];
        assert_eq!(archive.events(other, &|| false).unwrap().len() as u64 > 0, recorded > 0);
    }
}
