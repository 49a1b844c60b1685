//! The bundled font: DejaVu Sans (`assets/fonts/`, Bitstream Vera license), compiled into the
//! library and registered with plotters as its `sans-serif` family, so that plots render the
//! same on a machine with no fonts installed.

use std::sync::OnceLock;

use plotters::style::{register_font, FontStyle};

/// DejaVu Sans 2.37, from Debian's `fonts-dejavu-core`.
const DEJAVU_SANS: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// The font family every text of the plots is drawn in.
///
/// ```
/// assert_eq!(kselect::plot::font::FAMILY, "sans-serif");
/// ```
pub const FAMILY: &str = "sans-serif";

/// Registers the bundled font as [`FAMILY`] (once per process) and says whether it is
/// registered. The plotting functions call it themselves.
///
/// ```
/// assert!(kselect::plot::font::register());
/// assert!(kselect::plot::font::register()); // a second call does nothing
/// ```
pub fn register() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok())
}
