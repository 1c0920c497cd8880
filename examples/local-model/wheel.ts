// Reads one member out of a Python wheel (a zip archive) without loading the archive into memory:
// the central directory says where the member's bytes are; they are inflated straight to a file.
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { ToolplaneError } from '../../catalog/errors';

/** A wheel that is not the zip this reader expects, or lacks the member asked for. */
export class WheelUnreadable extends ToolplaneError<'WheelUnreadable', { wheel: string }> {
  constructor(wheel: string, why: string) {
    super('WheelUnreadable', `${wheel}: ${why}`, { wheel });
  }
}

/** Where one member of the archive lies, from its central directory entry. */
export interface WheelMember {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
/** A 32-bit field at its maximum means the real value is in a zip64 record, which wheels of this size never need. */
const ZIP64 = 0xffffffff;

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const n = fs.readSync(fd, buf, 0, length, position);
  return buf.subarray(0, n);
}

/** The archive's members, read from its central directory. */
export function wheelMembers(wheel: string): WheelMember[] {
  const fd = fs.openSync(wheel, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    // The end record is 22 bytes plus a comment of up to 64 KiB, at the very end.
    const tailStart = Math.max(0, size - 22 - 0xffff);
    const tail = readAt(fd, tailStart, size - tailStart);
    let end = -1;
    for (let i = tail.length - 22; i >= 0; i--)
      if (tail.readUInt32LE(i) === END_OF_CENTRAL_DIRECTORY) {
        end = i;
        break;
      }
    if (end < 0) throw new WheelUnreadable(wheel, 'no zip end-of-central-directory record');
    const count = tail.readUInt16LE(end + 10);
    const dirSize = tail.readUInt32LE(end + 12);
    const dirOffset = tail.readUInt32LE(end + 16);
    if (dirOffset === ZIP64 || dirSize === ZIP64) throw new WheelUnreadable(wheel, 'a zip64 archive');
    const dir = readAt(fd, dirOffset, dirSize);
    const members: WheelMember[] = [];
    for (let at = 0, i = 0; i < count; i++) {
      if (dir.readUInt32LE(at) !== CENTRAL_ENTRY)
        throw new WheelUnreadable(wheel, `central directory entry ${i} is corrupt`);
      const nameLength = dir.readUInt16LE(at + 28);
      const extraLength = dir.readUInt16LE(at + 30);
      const commentLength = dir.readUInt16LE(at + 32);
      const member: WheelMember = {
        method: dir.readUInt16LE(at + 10),
        compressedSize: dir.readUInt32LE(at + 20),
        size: dir.readUInt32LE(at + 24),
        localHeaderOffset: dir.readUInt32LE(at + 42),
        name: dir.toString('utf8', at + 46, at + 46 + nameLength),
      };
      if ([member.compressedSize, member.size, member.localHeaderOffset].includes(ZIP64))
        throw new WheelUnreadable(wheel, `${member.name} is stored as zip64`);
      members.push(member);
      at += 46 + nameLength + extraLength + commentLength;
    }
    return members;
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes one member's bytes to `dest` (inflated if the archive deflated it). */
export async function extractMember(wheel: string, member: WheelMember, dest: string): Promise<void> {
  if (member.method !== 0 && member.method !== 8)
    throw new WheelUnreadable(
      wheel,
      `${member.name} uses zip compression method ${member.method}, not stored or deflated`,
    );
  const fd = fs.openSync(wheel, 'r');
  let dataStart: number;
  try {
    const local = readAt(fd, member.localHeaderOffset, 30);
    if (local.length < 30 || local.readUInt32LE(0) !== LOCAL_HEADER)
      throw new WheelUnreadable(wheel, `${member.name}: no local header where the directory says`);
    dataStart = member.localHeaderOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  } finally {
    fs.closeSync(fd);
  }
  const source = fs.createReadStream(wheel, {
    start: dataStart,
    end: dataStart + member.compressedSize - 1,
  });
  const sink = fs.createWriteStream(dest);
  if (member.method === 0) await pipeline(source, sink);
  else await pipeline(source, zlib.createInflateRaw(), sink);
  const written = fs.statSync(dest).size;
  if (written !== member.size)
    throw new WheelUnreadable(wheel, `${member.name} came out ${written} bytes, the directory says ${member.size}`);
}

/** Reads a small member (such as the wheel's RECORD) as text. */
export async function memberText(wheel: string, member: WheelMember, scratch: string): Promise<string> {
  await extractMember(wheel, member, scratch);
  try {
    return fs.readFileSync(scratch, 'utf8');
  } finally {
    fs.rmSync(scratch, { force: true });
  }
}
