/// A `Player` that can also sound the calibration probe (`ProbeSignal`) through the same
/// output path as the music, so a room calibration hears this device where its music is
/// heard. A player that cannot is left out of calibrations: the listener reports its
/// probe as not heard rather than guessing.
///
/// An implementation over AVAudioEngine schedules a buffer of `ProbeSignal.samples(sampleRate:)`
/// on a player node at each instant's host time, through the mixer the music uses.
public protocol ProbePlayer: Player {
    /// Plays the probe once from each of the local instants `atLocal` (ms, the engine's
    /// clock), as sent to the output: it is heard `outputLatencyMs` later.
    func playProbe(atLocal instants: [Double]) async
}
