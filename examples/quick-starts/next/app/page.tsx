// app/page.tsx
import { Orders } from '../orders';

export default function Home() {
  return <Orders />;
}
