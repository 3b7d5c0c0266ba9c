import { createHash } from 'node:crypto';
import { SANDBOX_CODES } from './sandbox-api.js';

/** Largest photo `POST …/photos` takes, in bytes (other bodies: MAX_BODY_BYTES). */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
/** Photos kept at once, and their bytes together; the oldest goes first. */
const KEPT_PHOTOS = 100;
const KEPT_BYTES = 64 * 1024 * 1024;

/** A multipart upload as the data routes take it: the file part and the other fields. */
export interface Upload {
  /** The multipart field that held the file (the SDK's `name`). */
  field: string;
  fileName: string;
  contentType: string;
  bytes: Uint8Array;
  /** The other fields (the SDK's `formData`). */
  fields: Record<string, string>;
}

/** A data route's answer: its status, headers and body (JSON text or bytes). */
export interface DataAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** What a photo upload answers in `data`. */
export interface SandboxPhoto {
  /** `ph_1`, `ph_2`… in upload order. */
  id: string;
  /** Where `GET` gives the bytes back (a Bearer call like every data route): `{origin}/open/api/v1/sdk/photos/{id}`. */
  url: string;
  /** The multipart field, file name, type, size and SHA-256 (hex) of the file as received. */
  field: string;
  file_name: string;
  content_type: string;
  size: number;
  sha256: string;
  /** The other fields of the form (e.g. `order_no`). */
  fields: Record<string, string>;
}

const json = (status: number, value: unknown): DataAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify(value),
});
const bytes = (contentType: string, body: Uint8Array, fileName: string): DataAnswer => ({
  status: 200,
  headers: { 'content-type': contentType, 'content-disposition': `inline; filename="${fileName.replace(/["\\\r\n]/g, '_')}"` },
  body,
});

/**
 * The sandbox's own file routes, so that the README's files example runs against it: a photo up
 * (`POST …/photos`, multipart), the same bytes back (`GET …/photos/{id}`), an order's invoice
 * down (`GET …/invoices/{order_no}`, a one-page PDF). Photos live in memory.
 */
export function createFileStore(hasOrder: (orderNo: string) => boolean) {
  const photos = new Map<string, { photo: SandboxPhoto; bytes: Uint8Array }>();
  let kept = 0;
  let sequence = 0;

  return {
    /** `POST …/photos`: keeps the file, answers what it received. */
    savePhoto(upload: Upload | { error: string } | undefined, origin: string, path: string): DataAnswer {
      if (!upload || 'error' in upload)
        return json(400, {
          code: SANDBOX_CODES.badRequest,
          message:
            (upload ? upload.error + ': ' : '') +
            'send the photo as multipart/form-data with one file part, e.g. client.upload(path, { filePath, name: "file" })',
        });
      const id = 'ph_' + ++sequence;
      const photo: SandboxPhoto = {
        id,
        url: origin + path + '/' + id,
        field: upload.field,
        file_name: upload.fileName,
        content_type: upload.contentType,
        size: upload.bytes.length,
        sha256: createHash('sha256').update(upload.bytes).digest('hex'),
        fields: upload.fields,
      };
      photos.set(id, { photo, bytes: upload.bytes });
      kept += upload.bytes.length;
      for (const [old, entry] of photos) {
        if (photos.size <= KEPT_PHOTOS && kept <= KEPT_BYTES) break;
        photos.delete(old);
        kept -= entry.bytes.length;
      }
      return json(200, { code: 0, data: photo });
    },
    /** `GET …/photos/{id}`: the bytes as uploaded. */
    photo(id: string): DataAnswer {
      const found = photos.get(id);
      if (!found) return json(404, { code: SANDBOX_CODES.notFound, message: 'no photo ' + id + ' (the sandbox keeps the last ' + KEPT_PHOTOS + ')' });
      return bytes(found.photo.content_type, found.bytes, found.photo.file_name);
    },
    /** `GET …/invoices/{order_no}`: a one-page PDF naming the order. */
    invoice(orderNo: string): DataAnswer {
      if (!hasOrder(orderNo)) return json(404, { code: SANDBOX_CODES.notFound, message: 'no order ' + orderNo });
      return bytes('application/pdf', invoicePdf(orderNo), 'invoice-' + orderNo + '.pdf');
    },
  };
}

/** A minimal valid PDF: one A6 page with a line of text (its xref offsets computed). */
export function invoicePdf(orderNo: string): Uint8Array {
  const text = `Invoice ${orderNo}, a channel-sandbox stand-in`.replace(/[()\\]/g, '\\$&');
  const stream = `BT /F1 11 Tf 24 360 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 298 420] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets = objects.map((object, i) => {
    const at = pdf.length;
    pdf += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return at;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` + offsets.map((at) => String(at).padStart(10, '0') + ' 00000 n \n').join('');
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

/**
 * A multipart body read into an {@link Upload} (the first file part, and the text fields), or
 * why it could not be: `undefined` when the body is not multipart at all.
 */
export async function readUpload(body: Uint8Array, contentType: string | undefined): Promise<Upload | { error: string } | undefined> {
  if (!/^multipart\/form-data\s*;/i.test(contentType ?? '')) return undefined;
  let form: FormData;
  try {
    form = await new Response(body as Uint8Array<ArrayBuffer>, { headers: { 'content-type': contentType as string } }).formData();
  } catch {
    return { error: 'the multipart body could not be read' };
  }
  const fields: Record<string, string> = {};
  let file: { field: string; value: File } | undefined;
  for (const [name, value] of form) {
    if (typeof value === 'string') fields[name] = value;
    else file ??= { field: name, value };
  }
  if (!file) return { error: 'the form has no file part' };
  return {
    field: file.field,
    fileName: file.value.name || 'file',
    contentType: file.value.type || 'application/octet-stream',
    bytes: new Uint8Array(await file.value.arrayBuffer()),
    fields,
  };
}
