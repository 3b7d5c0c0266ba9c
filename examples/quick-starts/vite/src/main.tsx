// src/main.tsx: the page's entry (index.html loads it).
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Orders } from './orders';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Orders />
  </StrictMode>,
);
